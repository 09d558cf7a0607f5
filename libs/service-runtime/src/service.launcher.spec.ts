import { spawn } from 'node:child_process';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const LAUNCHER_SOURCE = path.join(__dirname, 'service.launcher.ts');
const CONFIG_ERROR_SOURCE = path.join(REPO_ROOT, 'libs/config/src/env.util.ts');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` (with `launcher` and `ConfigError` in scope) in a Node process of its own, as the
 * apps run: once it prints `started`, sends it SIGTERM, and resolves with how it ended.
 */
function runInChild(script: string): Promise<Outcome> {
  const source = `
    require(${JSON.stringify(require.resolve('@swc-node/register'))});
    const launcher = require(${JSON.stringify(LAUNCHER_SOURCE)});
    const { ConfigError } = require(${JSON.stringify(CONFIG_ERROR_SOURCE)});
    ${script}
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', source], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!signalled && stdout.includes('started')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Not an assertion: a child that never exits must not hold Jest open after its test failed.
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** stopOnSignal with a logger that prints pino-like lines to stderr, and a process that keeps running. */
function stopOnSignalScript(stopBody: string, deadlineMs?: number): string {
  return `
    const logger = {
      error: (object, message) =>
        console.error(JSON.stringify({ ...object, err: object.err && object.err.message, msg: message })),
    };
    launcher.stopOnSignal(async (signal) => { console.log('stopping on ' + signal); ${stopBody} }, {
      logger,
      deadlineMs: ${deadlineMs ?? 'undefined'},
    });
    setInterval(() => {}, 1000);
    console.log('started');
  `;
}

describe('stopOnSignal', () => {
  it('runs the stop with the signal that arrived, then exits 0', async () => {
    const outcome = await runInChild(stopOnSignalScript('await new Promise((r) => setTimeout(r, 10));'));
    expect(outcome.stdout).toContain('stopping on SIGTERM');
    expect(outcome.code).toBe(0);
  });

  it('exits 1 with a "shutdown failed" line when the stop throws', async () => {
    const outcome = await runInChild(stopOnSignalScript("throw new Error('the drain failed');"));
    expect(outcome.code).toBe(1);
    expect(jsonLines(outcome.stderr)).toEqual([{ err: 'the drain failed', msg: 'shutdown failed' }]);
  });

  it('exits 1 with a line naming the deadline when the stop never finishes', async () => {
    const outcome = await runInChild(stopOnSignalScript('await new Promise(() => {});', 300));
    expect(outcome.stdout).toContain('stopping on SIGTERM');
    expect(outcome.code).toBe(1);
    expect(jsonLines(outcome.stderr)).toEqual([
      { signal: 'SIGTERM', deadlineMs: 300, msg: 'shutdown did not finish within 300 ms; exiting' },
    ]);
  });
});

describe('launchService', () => {
  it("logs the app's stopping line with the signal, stops it and exits 0", async () => {
    const outcome = await runInChild(`
      launcher.launchService({
        app: 'example',
        loadConfig: () => ({ logLevel: 'info' }),
        logLevel: (config) => config.logLevel,
        start: async (_config, logger) => {
          logger.info('starting');
          // After the launcher has resumed and installed its signal handlers.
          setTimeout(() => console.log('started'));
          return { stopping: 'example stopping', stop: async () => console.log('the stop ran') };
        },
      });
    `);
    expect(outcome.code).toBe(0);
    const lines = jsonLines(outcome.stdout);
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, app: 'example', msg: 'starting' }),
      expect.objectContaining({ level: 30, app: 'example', signal: 'SIGTERM', msg: 'example stopping' }),
    ]);
    expect(outcome.stdout).toContain('the stop ran');
  });

  it('ends a start that meets a bad setting with its one line and exit 1', async () => {
    const outcome = await runInChild(`
      launcher.launchService({
        loadConfig: () => { throw new ConfigError('INGESTION_PORT', 'many', 'must be a port'); },
        logLevel: () => 'info',
        start: async () => ({ stopping: 'stopping', stop: async () => {} }),
      });
    `);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.trim()).toBe('INGESTION_PORT=many: must be a port');
  });
});
