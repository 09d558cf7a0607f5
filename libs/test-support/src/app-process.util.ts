import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { eventually } from './eventually.util';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const BIN_DIR = path.join(REPO_ROOT, 'node_modules', '.bin');
export const READY_TIMEOUT_MS = 60_000;
/** What every service promises: it exits within 20 s of SIGTERM, whatever its dependencies do. */
export const STOP_TIMEOUT_MS = 20_000;

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AppProcess {
  name: string;
  child: ChildProcessWithoutNullStreams;
  /** stdout and stderr together. */
  output(): string;
  exited: Promise<ExitStatus>;
}

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

export function isRunning(app: AppProcess): boolean {
  return app.child.exitCode === null && app.child.signalCode === null;
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

/** Fails early with the log if the process dies. */
export async function waitForReady(app: AppProcess, baseUrl: string, probe = '/_ready'): Promise<void> {
  await waitForApp(app, `${probe} answering 200`, async () => {
    try {
      return (await fetch(`${baseUrl}${probe}`)).status === 200;
    } catch {
      return false; // Not listening yet.
    }
  });
}

/** `eventually`, for a check on a running app: fails at once, with its log, if the process dies. */
export async function waitForApp(
  app: AppProcess,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<void> {
  let exit: ExitStatus | undefined;
  void app.exited.then((result) => (exit = result));
  await eventually(
    `${app.name}: ${what}`,
    async () => {
      if (exit)
        throw new Error(`${app.name} exited with ${String(exit.code)} before ${what}:\n${app.output()}`);
      return check();
    },
    { timeoutMs, intervalMs: 200, context: () => app.output() },
  );
}

/** SIGKILL and a failure if it does not stop in time. */
export async function stopApp(app: AppProcess): Promise<ExitStatus> {
  if (!isRunning(app)) return app.exited;
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

export async function killApps(...apps: (AppProcess | undefined)[]): Promise<void> {
  for (const app of apps) {
    if (app && isRunning(app)) {
      app.child.kill('SIGKILL');
      await app.exited;
    }
  }
}
