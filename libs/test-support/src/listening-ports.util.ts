import { readdir, readFile, readlink } from 'node:fs/promises';
import { Client } from 'pg';

/** From /proc (its socket inodes matched against the LISTEN rows); Linux only. */
export async function listeningTcpPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]);
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    const rows = (await readFile(`/proc/${pid}/net/${table}`, 'utf8')).trim().split('\n').slice(1);
    for (const row of rows) {
      const [, local, , state, , , , , , inode] = row.trim().split(/\s+/);
      if (state === '0A' && inodes.has(inode)) ports.add(parseInt(local.split(':')[1], 16));
    }
  }
  return [...ports].sort((left, right) => left - right);
}

/** Whether a `pg` client naming another user (nobody) and a wrong password gets a session on 127.0.0.1:`port`. */
export async function postgresAcceptsStranger(port: number): Promise<boolean> {
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: 'nobody',
    password: 'wrong',
    database: 'postgres',
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
