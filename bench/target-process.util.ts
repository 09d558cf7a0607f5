import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { TargetListening } from './capture-target.process';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

export type TargetKind = 'capture' | 'ceiling';

export interface TargetProcess {
  kind: TargetKind;
  url: string;
  pid: number;
  /** SIGKILL if it has not exited in time. Safe to call twice. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** On the pinned Node, TypeScript through @swc-node/register like `npm start`; resolves once it listens. */
export async function startTarget(
  kind: TargetKind,
  env: Record<string, string>,
  cpuProfileDir?: string,
): Promise<TargetProcess> {
  const profile = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(cpuProfileDir)}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, '-r', '@swc-node/register', path.join(__dirname, 'capture-target.process.ts')],
    {
      cwd: path.resolve(__dirname, '..'),
      env: { ...process.env, ...env, BENCH_TARGET: kind },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited(child);
    clearTimeout(timer);
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the ${kind} target did not listen within ${START_TIMEOUT_MS / 1000} s`)),
        START_TIMEOUT_MS,
      );
      child.once('message', (message: TargetListening) => {
        clearTimeout(timer);
        resolve(message.port);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the ${kind} target exited before listening (code ${code}, signal ${signal})`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    return { kind, url: `http://127.0.0.1:${port}`, pid: child.pid ?? 0, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
