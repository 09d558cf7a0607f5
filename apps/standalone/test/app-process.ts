import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InitialCredentials } from '@hogbase/management-api';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const BIN_DIR = path.join(REPO_ROOT, 'node_modules', '.bin');
export const READY_TIMEOUT_MS = 60_000;
export const STOP_TIMEOUT_MS = 20_000;
export const CREDENTIALS_FILE = 'initial-credentials.json';

/** What `npm start` writes to DATA_DIR/initial-credentials.json on its first start. */
export type { InitialCredentials };

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One of the apps running as its own process, as an operator starts it. */
export interface AppProcess {
  name: string;
  child: ChildProcessWithoutNullStreams;
  /** stdout and stderr together, as an operator's terminal shows them. */
  output(): string;
  exited: Promise<ExitStatus>;
}

/** The environment `npm start` gets on a machine with no services: no DATABASE_URL, pinned Node first. */
export function standaloneEnv(dataDir: string, port: number, capturePort = 0): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
    DATA_DIR: dataDir,
    MANAGEMENT_PORT: String(port),
    // 0: any free port, so that parallel runs and a developer's own `npm start` never collide.
    CAPTURE_PORT: String(capturePort),
  };
  // The embedded default: no real Postgres, Kafka or ClickHouse even when npm test started some.
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  delete env.NODE_OPTIONS;
  delete env.LOG_LEVEL;
  return env;
}

/** Runs `apps/<app>/src/main.ts` the way `npm start` runs the standalone app. */
export function startApp(name: string, env: NodeJS.ProcessEnv): AppProcess {
  const child = spawn('node', ['-r', '@swc-node/register', `apps/${name}/src/main.ts`], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<ExitStatus>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { name, child, output: () => output, exited };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Polls `GET <baseUrl><probe>` until it answers 200; fails early with the log if the process dies. */
export async function waitForReady(app: AppProcess, baseUrl: string, probe = '/_ready'): Promise<void> {
  await waitFor(app, `${probe} answering 200`, async () => {
    try {
      return (await fetch(`${baseUrl}${probe}`)).status === 200;
    } catch {
      return false; // Not listening yet.
    }
  });
}

/** Polls `check` until it holds; fails early with the log if the process dies. */
export async function waitFor(
  app: AppProcess,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  let exit: { code: number | null } | undefined;
  void app.exited.then((result) => (exit = result));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit)
      throw new Error(`${app.name} exited with ${String(exit.code)} before ${what}:\n${app.output()}`);
    if (await check()) return;
    await sleep(200);
  }
  throw new Error(`${app.name}: no ${what} within ${timeoutMs} ms:\n${app.output()}`);
}

/** SIGTERM, then the exit status; SIGKILL and a failure if it does not stop in time. */
export async function stopApp(app: AppProcess): Promise<ExitStatus> {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return app.exited;
  app.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>(
    (resolve) => (timer = setTimeout(() => resolve(undefined), STOP_TIMEOUT_MS)),
  );
  const result = await Promise.race([app.exited, timedOut]);
  clearTimeout(timer);
  if (!result) {
    app.child.kill('SIGKILL');
    throw new Error(`${app.name} did not stop within ${STOP_TIMEOUT_MS} ms of SIGTERM:\n${app.output()}`);
  }
  return result;
}

/** Kills what is still running (after a failed test). */
export async function killApps(...apps: (AppProcess | undefined)[]): Promise<void> {
  for (const app of apps) {
    if (app && app.child.exitCode === null && app.child.signalCode === null) {
      app.child.kill('SIGKILL');
      await app.exited;
    }
  }
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
