import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { InitialCredentials } from '@hogbase/management-api';
import {
  BIN_DIR,
  freePort,
  killApps,
  registerOpenApiDocumentFrom,
  startApp,
  stopApp,
  waitForReady as waitForProbe,
  type AppProcess,
  type ExitStatus,
} from '@hogbase/test-support';

export {
  BIN_DIR,
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  startApp,
  stopApp,
  STOP_TIMEOUT_MS,
  waitForApp,
  type AppProcess,
  type ExitStatus,
} from '@hogbase/test-support';

/** The apps whose hosts serve an OpenAPI document at /api/schema/ (ingestion and workers serve probes only). */
const DOCUMENTED_APPS = new Set(['standalone', 'management', 'capture']);

/**
 * Waits for `probe` to answer 200 (as test-support's waitForReady); from then on every answer the
 * suite receives from that host is checked against the document it serves
 * (libs/test-support/src/openapi-response-check.setup.ts).
 */
export async function waitForReady(app: AppProcess, baseUrl: string, probe?: string): Promise<void> {
  await waitForProbe(app, baseUrl, probe);
  if (DOCUMENTED_APPS.has(app.name)) await registerOpenApiDocumentFrom(baseUrl);
}

export const CREDENTIALS_FILE = 'initial-credentials.json';

/** What `npm start` writes to DATA_DIR/initial-credentials.json on its first start. */
export type { InitialCredentials };

/** The environment `npm start` gets on a machine with no services: no DATABASE_URL, pinned Node first. */
export function standaloneEnv(dataDir: string, port: number, capturePort = 0): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
    DATA_DIR: dataDir,
    MANAGEMENT_PORT: String(port),
    // 0: any free port, so that parallel runs and a developer's own `npm start` never collide.
    CAPTURE_PORT: String(capturePort),
    // The tests' receivers (webhooks, app archives, S3Mock) listen on loopback.
    EGRESS_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
  };
  // The embedded default: no real Postgres, Kafka or ClickHouse even when npm test started some.
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  delete env.NODE_OPTIONS;
  delete env.LOG_LEVEL;
  return env;
}

export async function readInitialCredentials(dataDir: string): Promise<InitialCredentials> {
  return JSON.parse(await readFile(path.join(dataDir, CREDENTIALS_FILE), 'utf8')) as InitialCredentials;
}

/** `npm start` on a fresh temporary DATA_DIR, ready on both ports, with the credentials it wrote. */
export interface StandaloneForTest {
  server: AppProcess;
  dataDir: string;
  managementUrl: string;
  captureUrl: string;
  credentials: InitialCredentials;
  /** SIGTERM and the exit status (as stopApp); the process is gone and DATA_DIR removed after, even when it throws. */
  stop(): Promise<ExitStatus>;
  /** Kills the process if it still runs and removes DATA_DIR (after a failed test). */
  kill(): Promise<void>;
}

/**
 * Starts `npm start` with `standaloneEnv` (plus `extraEnv`) on a new DATA_DIR under the temp
 * directory named `tempPrefix…`, on two free ports, and waits for both to answer `/_ready`. If it
 * does not get there, the process is killed and DATA_DIR removed before the error is thrown.
 */
export async function startStandaloneForTest(
  tempPrefix: string,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<StandaloneForTest> {
  const dataDir = await mkdtemp(path.join(tmpdir(), tempPrefix));
  const [port, capturePort] = [await freePort(), await freePort()];
  const server = startApp('standalone', { ...standaloneEnv(dataDir, port, capturePort), ...extraEnv });
  const kill = async (): Promise<void> => {
    await killApps(server);
    await rm(dataDir, { recursive: true, force: true });
  };
  const managementUrl = `http://127.0.0.1:${port}`;
  const captureUrl = `http://127.0.0.1:${capturePort}`;
  try {
    await waitForReady(server, managementUrl);
    await waitForReady(server, captureUrl);
    const credentials = await readInitialCredentials(dataDir);
    return {
      server,
      dataDir,
      managementUrl,
      captureUrl,
      credentials,
      async stop() {
        try {
          return await stopApp(server);
        } finally {
          await kill();
        }
      },
      kill,
    };
  } catch (error) {
    await kill();
    throw error;
  }
}
