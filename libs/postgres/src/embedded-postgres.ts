import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** A `postgres://` URL that `pg` and TypeORM use unchanged. */
  url: string;
  /** The pool size clients must stay within (the socket server's connection limit). */
  maxConnections: number;
  stop(): Promise<void>;
}

interface EmbeddedPostgresLock {
  pid: number;
  port: number;
}

const LOCK_FILE = 'postgres.lock.json';

function connectionUrl(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const PROBE_TIMEOUT_MS = 2_000;

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const settle = (accepted: boolean) => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => settle(false));
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}

/**
 * The URL of the embedded Postgres another process of this data directory is serving, if any.
 * PGlite is single-process: a second process must go through the first one's socket, never open
 * the files itself.
 */
export async function findRunningEmbeddedPostgres(dataDir: string): Promise<string | undefined> {
  let lock: EmbeddedPostgresLock;
  try {
    lock = JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8')) as EmbeddedPostgresLock;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(lock.port) || lock.port <= 0 || lock.port > 65535) return undefined;
  if (lock.pid === process.pid || !isAlive(lock.pid)) return undefined;
  // TRICKY: a server killed with SIGKILL leaves its lock behind, and after a restart (a container's
  // small pids above all) its pid may belong to an unrelated live process. Only a listening port
  // proves the server is still there; without this check the data dir stays locked for good.
  return (await acceptsConnections(lock.port)) ? connectionUrl(lock.port) : undefined;
}

/**
 * Runs Postgres in-process (PGlite, Postgres compiled to WASM) with its files under
 * `<dataDir>/postgres`, and serves the wire protocol on loopback so that `pg` and TypeORM work as
 * against any Postgres. The socket server queues statements by connection and keeps a
 * transaction on the connection that opened it, so a small pool is safe.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number; maxConnections?: number } = {},
): Promise<EmbeddedPostgres> {
  const running = await findRunningEmbeddedPostgres(dataDir);
  if (running) {
    throw new Error(`the embedded Postgres of ${dataDir} is already served by another process (${running})`);
  }
  const databaseDir = path.join(dataDir, 'postgres');
  // Owner only, as Postgres insists for its data directory: it holds e-mails and key hashes.
  await mkdir(databaseDir, { recursive: true, mode: 0o700 });
  await chmod(databaseDir, 0o700);
  const maxConnections = options.maxConnections ?? 8;
  const db = await PGlite.create({ dataDir: databaseDir });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: options.port ?? 0, maxConnections });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  const lockPath = path.join(dataDir, LOCK_FILE);
  await writeFile(lockPath, JSON.stringify({ pid: process.pid, port } satisfies EmbeddedPostgresLock), {
    mode: 0o600,
  });
  return {
    url: connectionUrl(port),
    maxConnections,
    async stop() {
      await server.stop();
      await db.close();
      await rm(lockPath, { force: true });
    },
  };
}
