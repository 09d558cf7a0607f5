import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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

/**
 * The URL of the embedded Postgres another process of this data directory is serving, if any.
 * PGlite is single-process: a second process must go through the first one's socket, never open
 * the files itself.
 */
export async function findRunningEmbeddedPostgres(dataDir: string): Promise<string | undefined> {
  try {
    const lock = JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8')) as EmbeddedPostgresLock;
    return lock.pid !== process.pid && isAlive(lock.pid) ? connectionUrl(lock.port) : undefined;
  } catch {
    return undefined;
  }
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
  await mkdir(databaseDir, { recursive: true });
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
