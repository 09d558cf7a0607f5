import { chmod, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runProcess, type ProcessResult } from './run-process.util';

/**
 * Runs a Node script as the OS user `nobody` (needs root). The checkout may sit where `nobody` cannot
 * enter, so the script runs on a copy of this Node binary in a world-readable temp folder, with Node's
 * own modules only.
 */
export async function runNodeAsNobody(
  script: string,
  args: readonly string[],
  timeoutMs = 20_000,
): Promise<ProcessResult> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hogbase-as-nobody-'));
  try {
    await chmod(folder, 0o755);
    const node = path.join(folder, 'node');
    await copyFile(process.execPath, node);
    await chmod(node, 0o755);
    return await runProcess('runuser', ['-u', 'nobody', '--', node, '-e', script, ...args], {
      cwd: folder,
      env: { PATH: process.env.PATH },
      timeoutMs,
    });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * For runNodeAsNobody: connects to the Unix socket named by its first argument and prints
 * `{"connected": boolean, "code"?: string}` (the kernel's EACCES comes before Postgres sees anything).
 */
export const OPEN_UNIX_SOCKET_SCRIPT = `
const net = require('node:net');
const socket = net.connect(process.argv[1]);
socket.setTimeout(5000, () => { console.log(JSON.stringify({ connected: false, code: 'TIMEOUT' })); socket.destroy(); });
socket.once('connect', () => { console.log(JSON.stringify({ connected: true })); socket.destroy(); });
socket.once('error', (error) => console.log(JSON.stringify({ connected: false, code: error.code })));
`;
