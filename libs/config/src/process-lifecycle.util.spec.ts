import { spawn } from 'node:child_process';
import path from 'node:path';

const LIFECYCLE_SOURCE = path.join(__dirname, 'process-lifecycle.util.ts');
const ENV_SOURCE = path.join(__dirname, 'env.util.ts');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `body` (the inside of an async main) under runMain in a Node process of its own. */
function runInChild(body: string): Promise<Outcome> {
  const script = `
    require(${JSON.stringify(require.resolve('@swc-node/register'))});
    const { runMain } = require(${JSON.stringify(LIFECYCLE_SOURCE)});
    const { ConfigError } = require(${JSON.stringify(ENV_SOURCE)});
    runMain(async () => { ${body} });
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('runMain', () => {
  it('logs an uncaught exception and an unhandled rejection as pino error lines and keeps the process running', async () => {
    const outcome = await runInChild(`
      setTimeout(() => { throw new Error('thrown from a timer'); });
      Promise.reject(new Error('rejected and never handled'));
      setTimeout(() => { console.log('still serving'); process.exit(0); });
    `);
    expect(outcome.stdout).toContain('still serving');
    expect(outcome.code).toBe(0);
    const lines = jsonLines(outcome.stderr);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 50,
          msg: 'uncaught exception; the process keeps running',
          err: expect.objectContaining({ type: 'Error', message: 'thrown from a timer' }) as unknown,
        }),
        expect.objectContaining({
          level: 50,
          msg: 'unhandled promise rejection; the process keeps running',
          err: expect.objectContaining({ message: 'rejected and never handled' }) as unknown,
        }),
      ]),
    );
  });

  it('still ends the process with 1 and the one-line message on a ConfigError, at start or later', async () => {
    const atStart = await runInChild(
      `throw new ConfigError('APPS_THREADS', 'many', 'must be an integer >= 1');`,
    );
    expect(atStart.code).toBe(1);
    expect(atStart.stderr.trim()).toBe('APPS_THREADS=many: must be an integer >= 1');

    const later = await runInChild(`
      setTimeout(() => { throw new ConfigError('APPS_THREADS', 'many', 'must be an integer >= 1'); });
    `);
    expect(later.code).toBe(1);
    expect(later.stderr.trim()).toBe('APPS_THREADS=many: must be an integer >= 1');
  });
});
