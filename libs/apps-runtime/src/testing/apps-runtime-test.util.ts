import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppsRuntimeConfig } from '@hogbase/config';

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

/** Polls `probe` until it answers something other than undefined; fails the test past `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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
