import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { Registry } from 'prom-client';
import type { AppsRuntimeConfig } from '@hogbase/config';
import type { CapturedEvent } from '@hogbase/event-contract';
import { eventually } from '@hogbase/test-support';
import { AppDestinations, type AppDestinationsOptions } from '../app-destinations.service';
import type { AppsRuntime } from '../apps-runtime.service';

/** An apps runtime's settings for tests: small budgets, receivers on loopback allowed. */
export function testAppsRuntimeConfig(overrides: Partial<AppsRuntimeConfig> = {}): AppsRuntimeConfig {
  return {
    memoryLimitBytes: 32 * 1024 * 1024,
    timeLimitMs: 2_000,
    callCpuMs: 1_000,
    threads: 1,
    sandboxesMemoryBytes: 256 * 1024 * 1024,
    timeoutBackoffMs: 10_000,
    timeoutsBeforeDisable: 5,
    cacheBytesPerApp: 1024 * 1024,
    cacheBytes: 4 * 1024 * 1024,
    storageBytesPerConfig: 1024 * 1024,
    storageValueMaxBytes: 64 * 1024,
    fetchTimeoutMs: 2_000,
    fetchMaxResponseBytes: 1024 * 1024,
    encryptionKeys: [],
    dataDir: '/nonexistent',
    geoipDatabasePath: undefined,
    egress: { allowedPrivateNetworks: ['127.0.0.0/8'], ownPorts: [] },
    ...overrides,
  };
}

export interface TestReceiver {
  url: string;
  /** The paths (with query strings) requested so far, in order. */
  paths: string[];
  close(): Promise<void>;
}

/** A loopback HTTP receiver answering 200, or what `answer` does with the request. */
export async function startTestReceiver(
  answer?: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<TestReceiver> {
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '');
    request.resume();
    request.on('end', () => {
      if (answer) answer(request, response);
      else response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A captured `viewed` event of `visitor` in the project, as capture hands it to the transformations. */
export function testCapturedEvent(teamId: number, properties: Record<string, unknown> = {}): CapturedEvent {
  return {
    uuid: randomUUID(),
    distinct_id: 'visitor',
    ip: null,
    data: JSON.stringify({ event: 'viewed', distinct_id: 'visitor', properties }),
    now: new Date().toISOString(),
    sent_at: null,
    token: 'phc_test',
    team_id: teamId,
    event: 'viewed',
    timestamp: new Date().toISOString(),
  };
}

/**
 * The runtime's apps as destinations on the job engine of `connectionString`, started and ready;
 * `registry` gets their metrics. Stop them before the runtime is closed.
 */
export async function startTestDestinations(
  runtime: AppsRuntime,
  options: Pick<AppDestinationsOptions, 'pool' | 'connectionString' | 'logger'> & { registry?: Registry },
): Promise<AppDestinations> {
  const destinations = new AppDestinations({
    ...options,
    apps: runtime.apps,
    log: runtime.log,
    fetch: runtime.services.fetch,
    registry: options.registry ?? new Registry(),
  });
  destinations.start();
  try {
    await eventually('the job engine', () => destinations.ready() === true);
  } catch (error) {
    await destinations.stop();
    throw error;
  }
  return destinations;
}

/** Pins the config to `code` with these methods, as pinning another organization's app leaves it. */
export async function pinTestConfig(
  pool: Pick<Pool, 'query'>,
  configId: number,
  code: string,
  methods: string[],
): Promise<void> {
  await pool.query(
    `UPDATE plugin_configs SET code_pinned_at = now(), pinned_code = $2, pinned_capabilities = $3
     WHERE id = $1`,
    [configId, code, JSON.stringify({ methods, jobs: [], scheduled_tasks: [] })],
  );
}
