import { chmod, lstat, mkdir, mkdtemp, opendir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { PGlite } from '@electric-sql/pglite';
import { EmbeddedWireServer } from './embedded-wire.server';

export interface EmbeddedPostgres {
  /** A `postgres://` URL that `pg` and TypeORM use unchanged (it names a Unix socket). */
  url: string;
  /** The directory holding the server's socket, `.s.PGSQL.<port>`: owner-only (0700). */
  socketDir: string;
  /** The pool size clients must stay within (the socket server's connection limit). */
  maxConnections: number;
  /**
   * A connection from this process without the socket, for `pg`'s `stream` option (with `url` for
   * the rest): EmbeddedWireServer.connectInProcess.
   */
  connectInProcess: () => Duplex;
  stop(): Promise<void>;
}

interface EmbeddedPostgresLock {
  pid: number;
  /** Where the socket is: `<dataDir>/postgres-socket`, or a temp directory when that path is too long. */
  socketDir?: string;
  /** A lock written before the server moved to a Unix socket: it listened on this loopback port. */
  port?: number;
}

const LOCK_FILE = 'postgres.lock.json';
const SOCKET_DIR = 'postgres-socket';
const TEMP_SOCKET_DIR_PREFIX = 'hogbase-pg-';
/** Only names the socket file, as Postgres does: nothing listens on TCP. */
const SOCKET_PORT = 5432;
/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 103;

function socketPath(socketDir: string): string {
  return path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
}

/**
 * node-postgres (and TypeORM, which hands the URL to it) connects to `<host>/.s.PGSQL.<port>` when
 * `host` is a directory. PGlite asks for no password; the socket directory's mode is the access check.
 */
function connectionUrl(socketDir: string): string {
  return `postgres://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}&sslmode=disable`;
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

function acceptsConnections(target: { path: string } | { port: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const socket =
      'path' in target ? connect({ path: target.path }) : connect({ host: '127.0.0.1', port: target.port });
    const settle = (accepted: boolean) => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => settle(false));
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}

async function readLock(dataDir: string): Promise<EmbeddedPostgresLock | undefined> {
  try {
    const lock = JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8')) as EmbeddedPostgresLock;
    return Number.isInteger(lock.pid) && lock.pid > 0 ? lock : undefined;
  } catch {
    return undefined;
  }
}

/** The lock of a server of this data directory that is still serving, if any. */
async function liveLock(dataDir: string): Promise<EmbeddedPostgresLock | undefined> {
  const lock = await readLock(dataDir);
  if (!lock || lock.pid === process.pid || !isAlive(lock.pid)) return undefined;
  // TRICKY: a server killed with SIGKILL leaves its lock behind, and after a restart (a container's
  // small pids above all) its pid may belong to an unrelated live process. Only a socket that
  // accepts proves the server is still there; without this check the data dir stays locked for good.
  if (typeof lock.socketDir === 'string' && path.isAbsolute(lock.socketDir)) {
    return (await acceptsConnections({ path: socketPath(lock.socketDir) })) ? lock : undefined;
  }
  if (Number.isInteger(lock.port) && lock.port! > 0 && lock.port! <= 65535) {
    return (await acceptsConnections({ port: lock.port! })) ? lock : undefined;
  }
  return undefined;
}

/**
 * The URL of the embedded Postgres another process of this data directory is serving, if any.
 * PGlite is single-process: a second process must go through the first one's socket, never open
 * the files itself.
 */
export async function findRunningEmbeddedPostgres(dataDir: string): Promise<string | undefined> {
  const lock = await liveLock(dataDir);
  return lock?.socketDir ? connectionUrl(lock.socketDir) : undefined;
}

function isTempSocketDir(dir: string): boolean {
  return path.dirname(dir) === tmpdir() && path.basename(dir).startsWith(TEMP_SOCKET_DIR_PREFIX);
}

/**
 * An owner-only directory for the socket. SECURITY: this mode is what keeps other local users out
 * (PGlite takes any user name and password as superuser), so the directory must be ours and 0700
 * even when it already existed.
 */
async function prepareSocketDir(dataDir: string): Promise<string> {
  const preferred = path.join(path.resolve(dataDir), SOCKET_DIR);
  if (Buffer.byteLength(socketPath(preferred)) <= MAX_SOCKET_PATH_BYTES) {
    await mkdir(preferred, { recursive: true, mode: 0o700 });
    const stats = await lstat(preferred);
    if (!stats.isDirectory() || (process.getuid && stats.uid !== process.getuid())) {
      throw new Error(`${preferred} must be a directory owned by this user`);
    }
    await chmod(preferred, 0o700);
    // A server killed with SIGKILL leaves its socket file behind, and listen() refuses to replace it.
    await rm(socketPath(preferred), { force: true });
    return preferred;
  }
  // mkdtemp creates a fresh 0700 directory that nobody else can have prepared.
  const fallback = await mkdtemp(path.join(tmpdir(), TEMP_SOCKET_DIR_PREFIX));
  if (Buffer.byteLength(socketPath(fallback)) > MAX_SOCKET_PATH_BYTES) {
    await rm(fallback, { recursive: true, force: true });
    throw new Error(
      `no socket path for the embedded Postgres: both ${preferred} and ${fallback} are too long; use a shorter DATA_DIR or TMPDIR`,
    );
  }
  return fallback;
}

/**
 * Runs Postgres in-process (PGlite, Postgres compiled to WASM) with its files under
 * `<dataDir>/postgres`, and serves the wire protocol on a Unix socket so that `pg` and TypeORM work
 * as against any Postgres (embedded-wire.server.ts: one session shared by every connection, each
 * connection's queries and transactions kept whole, LISTEN/NOTIFY across connections).
 *
 * SECURITY: PGlite has no authentication: whoever reaches the socket is superuser. The socket
 * therefore lives in an owner-only directory (`<dataDir>/postgres-socket`, or a 0700 temp
 * directory when that path is too long for a socket), recorded in the 0600 lock file; it never
 * listens on TCP.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { maxConnections?: number } = {},
): Promise<EmbeddedPostgres> {
  const running = await liveLock(dataDir);
  if (running) {
    throw new Error(
      `the embedded Postgres of ${dataDir} is already served by another process (pid ${running.pid})`,
    );
  }
  const stale = await readLock(dataDir);
  if (stale?.socketDir && isTempSocketDir(stale.socketDir)) {
    await rm(stale.socketDir, { recursive: true, force: true });
  }
  const databaseDir = path.join(dataDir, 'postgres');
  // Owner only, as Postgres insists for its data directory: it holds e-mails and key hashes.
  await mkdir(databaseDir, { recursive: true, mode: 0o700 });
  await chmod(databaseDir, 0o700);
  const socketDir = await prepareSocketDir(dataDir);
  const maxConnections = options.maxConnections ?? 8;
  let db: PGlite | undefined;
  let server: EmbeddedWireServer | undefined;
  try {
    db = await PGlite.create({ dataDir: databaseDir });
    // TRICKY: PGlite's file layer applies its own umask (022), not the process's, and its initdb
    // copies the template files as 0666: the directory's 0700 is what keeps others out, and this
    // brings the files in line with it.
    await restrictToOwner(databaseDir);
    server = new EmbeddedWireServer(db, maxConnections);
    await server.listen(socketPath(socketDir));
  } catch (error) {
    await server?.stop();
    await db?.close();
    await removeSocketDir(socketDir);
    throw error;
  }
  const lockPath = path.join(dataDir, LOCK_FILE);
  await writeFile(lockPath, JSON.stringify({ pid: process.pid, socketDir } satisfies EmbeddedPostgresLock), {
    mode: 0o600,
  });
  // writeFile's mode applies only when it creates the file: a stale lock keeps its old mode otherwise.
  await chmod(lockPath, 0o600);
  const startedServer = server;
  const startedDb = db;
  return {
    url: connectionUrl(socketDir),
    socketDir,
    maxConnections,
    connectInProcess: () => startedServer.connectInProcess(),
    async stop() {
      await startedServer.stop();
      await startedDb.close();
      await restrictToOwner(databaseDir); // What Postgres wrote with fopen() meanwhile is 0644.
      await rm(lockPath, { force: true });
      await removeSocketDir(socketDir);
    },
  };
}

async function removeSocketDir(socketDir: string): Promise<void> {
  if (isTempSocketDir(socketDir)) await rm(socketDir, { recursive: true, force: true });
  else await rm(socketPath(socketDir), { force: true });
}

/**
 * Strips group and other permissions from `root` and everything under it: one lstat per entry, a
 * chmod only where a bit is wrong. Symlinks are left alone (chmod would follow them out of the tree).
 */
export async function restrictToOwner(root: string): Promise<void> {
  const stats = await lstat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined; // Removed while we walked: nothing to protect.
    throw error;
  });
  if (!stats || stats.isSymbolicLink()) return;
  if ((stats.mode & 0o7077) !== 0) await chmod(root, stats.mode & 0o700);
  if (!stats.isDirectory()) return;
  for await (const entry of await opendir(root)) {
    await restrictToOwner(path.join(root, entry.name));
  }
}
