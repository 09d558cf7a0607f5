import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { runProcess, type ProcessResult } from '@hogbase/test-support';
import { REPO_ROOT } from './app-process';

export interface PythonVenv {
  dir: string;
  python: string;
  bin(name: string): string;
}

/** Under the user's cache, so it outlives a run; a new version gets a new directory. */
export function pythonVenv(name: string, version: string): PythonVenv {
  const dir = path.join(homedir(), '.cache', 'hogbase', `${name}-${version}`);
  return {
    dir,
    python: path.join(dir, 'bin', 'python'),
    bin: (script) => path.join(dir, 'bin', script),
  };
}

/** From the repository root, with the test's environment (PIP_* settings included). */
export function runCommand(command: string, args: string[], timeoutMs = 300_000): Promise<ProcessResult> {
  return runProcess(command, args, { cwd: REPO_ROOT, env: { ...process.env }, timeoutMs });
}

/** Reused when already at that version; throws with pip's last error line, so the caller decides skip or fail. */
export async function ensurePythonPackage(options: {
  name: string;
  distribution: string;
  version: string;
}): Promise<PythonVenv> {
  const { name, distribution, version } = options;
  const venv = pythonVenv(name, version);
  const installed = existsSync(venv.python)
    ? await runCommand(venv.python, [
        '-c',
        `import importlib.metadata as metadata; print(metadata.version(${JSON.stringify(distribution)}))`,
      ])
    : undefined;
  if (installed?.code === 0 && installed.stdout.trim() === version) return venv;
  await mkdir(path.dirname(venv.dir), { recursive: true });
  if (!existsSync(venv.python)) {
    const created = await runCommand('python3', ['-m', 'venv', venv.dir]).catch((error: Error) => ({
      code: -1,
      stdout: '',
      stderr: error.message,
    }));
    if (created.code !== 0)
      throw new Error(`python3 -m venv ${venv.dir} failed: ${lastLine(created.stderr)}`);
  }
  const pip = await runCommand(venv.bin('pip'), ['install', '--quiet', `${distribution}==${version}`]);
  if (pip.code !== 0)
    throw new Error(`pip install ${distribution}==${version} failed: ${lastLine(pip.stderr)}`);
  return venv;
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? '';
}
