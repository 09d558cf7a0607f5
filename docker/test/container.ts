import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runProcess } from '@hogbase/test-support';

/** What podman needs on every call here: runc (crun is refused) and the limits the sandbox allows. */
const PODMAN = ['--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1000:1000'];
/** `podman stop`'s wait before SIGKILL: longer than any drain, so a kill means a stop that hung. */
const STOP_TIMEOUT_S = 40;

export async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  const result = await runProcess('podman', [...PODMAN, ...args], {
    cwd: tmpdir(),
    env: process.env,
    timeoutMs,
  });
  if (result.code !== 0) {
    throw new Error(`podman ${args.join(' ')} exited ${result.code}: ${result.stderr.trim()}`);
  }
  return result.stdout;
}

export interface ContainerOptions {
  image: string;
  /** The environment, passed through a file so that no secret shows in a process list. */
  env: Record<string, string>;
  /** A host folder mounted at /data (owned by the image's user 10001). */
  dataDir?: string;
}

/**
 * The image run as a platform would run it: on the host's network (the engines listen on
 * loopback), root filesystem read-only with a tmpfs /tmp, no capabilities, no privilege gain, as
 * the image's own non-root user.
 */
export class Container {
  private readonly envDir = mkdtempSync(path.join(tmpdir(), 'hogbase-container-env-'));

  constructor(
    readonly name: string,
    private readonly options: ContainerOptions,
  ) {}

  private runArgs(): string[] {
    const envFile = path.join(this.envDir, 'env');
    writeFileSync(
      envFile,
      Object.entries(this.options.env)
        .map(([key, value]) => `${key}=${value}`)
        .join('\n'),
      { mode: 0o600 },
    );
    return [
      ...LIMITS,
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--env-file',
      envFile,
      ...(this.options.dataDir ? ['-v', `${this.options.dataDir}:/data`] : []),
    ];
  }

  /** Runs `command` to completion (`--rm`) and returns its stdout; throws on a non-zero exit. */
  async once(command: string[], timeoutMs = 180_000): Promise<string> {
    return podman(
      ['run', '--rm', '--name', this.name, ...this.runArgs(), this.options.image, ...command],
      timeoutMs,
    );
  }

  /** Starts `command` in the background. */
  async start(command: string[]): Promise<void> {
    await this.remove();
    await podman(['run', '-d', '--name', this.name, ...this.runArgs(), this.options.image, ...command]);
  }

  /** SIGTERM (the image's STOPSIGNAL), then the exit code once it has stopped by itself. */
  async stop(): Promise<{ exitCode: number; seconds: number }> {
    const started = Date.now();
    await podman(['stop', '--time', String(STOP_TIMEOUT_S), this.name], (STOP_TIMEOUT_S + 30) * 1000);
    const state = JSON.parse(await podman(['inspect', '--format', '{{json .State}}', this.name])) as {
      ExitCode: number;
      OOMKilled: boolean;
    };
    return { exitCode: state.ExitCode, seconds: (Date.now() - started) / 1000 };
  }

  async logs(): Promise<string> {
    const result = await runProcess('podman', [...PODMAN, 'logs', '--tail', '60', this.name], {
      cwd: tmpdir(),
      env: process.env,
      timeoutMs: 30_000,
    });
    return `${result.stdout}${result.stderr}`;
  }

  async remove(): Promise<void> {
    await runProcess('podman', [...PODMAN, 'rm', '--force', '--time', '0', this.name], {
      cwd: tmpdir(),
      env: process.env,
      timeoutMs: 60_000,
    });
  }

  async destroy(): Promise<void> {
    await this.remove();
    rmSync(this.envDir, { recursive: true, force: true });
  }
}

/** Resolves once `url` answers 200, or throws with the container's last log lines. */
export async function waitUntilReady(container: Container, url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) {
      throw new Error(`${container.name}: ${url} not ready after ${timeoutMs} ms\n${await container.logs()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
