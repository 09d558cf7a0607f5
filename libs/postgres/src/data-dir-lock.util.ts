import { createHash, randomBytes } from 'node:crypto';
import { link, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What the process holding a data directory tells another process that asks. */
export interface DataDirHolder {
  pid: number;
  /** By what they serve (`management`, `capture`), once it listens. */
  ports: Record<string, number>;
  postgresSocketDir?: string;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder | undefined,
  ) {
    super(`${dataDir} is in use by ${describeHolder(holder)}: one process per data directory`);
    this.name = 'DataDirInUseError';
  }
}

export function describeHolder(holder: DataDirHolder | undefined): string {
  if (!holder) return 'another process (which did not say its pid)';
  const ports = Object.entries(holder.ports).map(([name, port]) => `${name} on port ${port}`);
  return `another process (${[`pid ${holder.pid}`, ...ports].join(', ')})`;
}

export interface DataDirLock {
  readonly dataDir: string;
  /** Only whoever can read the data directory knows it (hex). */
  readonly id: string;
  /** What a second process learns of this one; undefined removes a detail. */
  announce(details: Partial<Omit<DataDirHolder, 'pid'>>): void;
  release(): Promise<void>;
}

/** SECURITY: the lock's name derives from this owner-only file: no other user can take or fake it. */
const LOCK_KEY_FILE = 'process-lock.key';
const QUERY_TIMEOUT_MS = 2_000;
const ACQUIRE_ATTEMPTS = 3;

/** link() publishes it whole: a concurrent start reads all or nothing. */
async function lockKey(dataDir: string, create: boolean): Promise<string | undefined> {
  const file = path.join(dataDir, LOCK_KEY_FILE);
  const read = () =>
    readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
  const existing = await read();
  if (existing || !create) return existing;
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(draft, { force: true });
  }
  return read();
}

/**
 * Linux: an abstract socket, freed however its process dies. Named after device and inode, so a
 * symlink or bind mount names the same lock.
 */
async function lockAddress(dataDir: string, key: string): Promise<{ address: string; id: string }> {
  const { dev, ino } = await stat(dataDir, { bigint: true });
  const id = createHash('sha256').update(`${dev}:${ino}:${key.trim()}`).digest('hex').slice(0, 32);
  const address =
    process.platform === 'linux' ? `\0hogbase-${id}` : path.join(tmpdir(), `hogbase-lock-${id}.sock`);
  return { address, id };
}

function listen(server: Server, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ path: address, exclusive: true }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function queryHolder(address: string): Promise<DataDirHolder | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ path: address });
    const chunks: Buffer[] = [];
    const settle = (holder: DataDirHolder | undefined) => {
      socket.destroy();
      resolve(holder);
    };
    socket.setTimeout(QUERY_TIMEOUT_MS, () => settle(undefined));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', () => settle(undefined));
    socket.once('end', () => {
      try {
        const holder = JSON.parse(Buffer.concat(chunks).toString('utf8')) as DataDirHolder;
        const valid = Number.isInteger(holder.pid) && holder.pid > 0 && typeof holder.ports === 'object';
        settle(valid ? holder : undefined);
      } catch {
        settle(undefined);
      }
    });
  });
}

/** Reads only: a data directory never locked has no key yet. */
export async function dataDirHolder(dataDir: string): Promise<DataDirHolder | undefined> {
  const resolved = path.resolve(dataDir);
  const key = await lockKey(resolved, false).catch(() => undefined);
  if (!key) return undefined;
  return queryHolder((await lockAddress(resolved, key)).address);
}

/**
 * One process per data directory (the embedded engines are single-process): a listening socket that
 * says who holds it. NOTE: outside Linux it is a file a killed process leaves; two racing starts
 * could then both win.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const resolved = path.resolve(dataDir);
  const key = await lockKey(resolved, true);
  if (!key) throw new Error(`${path.join(resolved, LOCK_KEY_FILE)} could not be read after it was written`);
  const { address, id } = await lockAddress(resolved, key);
  const holder: DataDirHolder = { pid: process.pid, ports: {} };
  const askers = new Set<Socket>();
  const server = createServer((socket) => {
    askers.add(socket);
    socket.once('close', () => askers.delete(socket));
    socket.on('error', () => undefined); // An asker that went away: nothing to tell it.
    socket.end(JSON.stringify(holder));
  });
  for (let attempt = 1; ; attempt++) {
    try {
      await listen(server, address);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      const other = await queryHolder(address);
      if (other || attempt >= ACQUIRE_ATTEMPTS) throw new DataDirInUseError(resolved, other);
      // Linux: the holder let go between the two calls (it was stopping). Elsewhere: a file left by
      // a killed holder, since nothing answers on it.
      if (process.platform !== 'linux') await rm(address, { force: true });
    }
  }
  server.unref();
  let released = false;
  return {
    dataDir: resolved,
    id,
    announce(details) {
      if (details.ports) holder.ports = { ...holder.ports, ...details.ports };
      if ('postgresSocketDir' in details) holder.postgresSocketDir = details.postgresSocketDir;
    },
    async release() {
      if (released) return;
      released = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of askers) socket.destroy(); // An asker that does not read holds no one up.
      await closed;
      if (process.platform !== 'linux') await rm(address, { force: true });
    },
  };
}
