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

/** Ingestion and workers serve probes only. */
const DOCUMENTED_APPS = new Set(['standalone', 'management', 'capture']);

/** From then on every answer from that host is checked against the document it serves. */
export async function waitForReady(app: AppProcess, baseUrl: string, probe?: string): Promise<void> {
  await waitForProbe(app, baseUrl, probe);
  if (DOCUMENTED_APPS.has(app.name)) await registerOpenApiDocumentFrom(baseUrl);
}

export const CREDENTIALS_FILE = 'initial-credentials.json';

export type { InitialCredentials };

/** As on a machine with no services: no DATABASE_URL, pinned Node first. */
export function standaloneEnv(dataDir: string, port: number, capturePort = 0): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
    DATA_DIR: dataDir,
    MANAGEMENT_PORT: String(port),
    // Any free port, so parallel runs and a developer's own `npm start` never collide.
    CAPTURE_PORT: String(capturePort),
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

export interface StandaloneForTest {
  server: AppProcess;
  dataDir: string;
  managementUrl: string;
  captureUrl: string;
  credentials: InitialCredentials;
  /** DATA_DIR is removed afterwards, even when it throws. */
  stop(): Promise<ExitStatus>;
  /** After a failed test. */
  kill(): Promise<void>;
}

/** On a new DATA_DIR and two free ports; on failure to get ready the process is killed and DATA_DIR removed. */
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
