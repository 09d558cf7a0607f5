import { chmod, lstat, mkdir, opendir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';
import pino from 'pino';
import { dataDirHolder, lockDataDir, type DataDirLock } from './data-dir-lock.util';
import { describeWriteError, storageProblem } from './data-dir-space.util';
import {
  openPGlite,
  releasePGliteFiles,
  reopenPGlite,
  type EmbeddedPostgresLogger,
  type ReopenAttempt,
} from './embedded-pglite.util';
import { EmbeddedWireServer, type SessionLoss } from './embedded-wire.server';

export type { EmbeddedPostgresLogger } from './embedded-pglite.util';

export interface EmbeddedPostgres {
  url: string;
  /** Owner-only (0700). */
  socketDir: string;
  maxConnections: number;
  connectInProcess: () => Duplex;
  stop(): Promise<void>;
}

const LEGACY_LOCK_FILE = 'postgres.lock.json';
const SOCKET_DIR = 'postgres-socket';
const TEMP_SOCKET_DIR_PREFIX = 'hogbase-pg-';
/** Only names the socket file, as Postgres does: nothing listens on TCP. */
const SOCKET_PORT = 5432;
/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 103;

function socketPath(socketDir: string): string {
  return path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
}

/** PGlite asks for no password: the socket directory's mode is the access check. */
function connectionUrl(socketDir: string): string {
  return `postgres://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}&sslmode=disable`;
}

/** PGlite is single-process: a second process goes through the first one's socket. */
export async function findRunningEmbeddedPostgres(dataDir: string): Promise<string | undefined> {
  const socketDir = (await dataDirHolder(dataDir))?.postgresSocketDir;
  return socketDir && path.isAbsolute(socketDir) ? connectionUrl(socketDir) : undefined;
}

function isTempSocketDir(dir: string): boolean {
  return path.dirname(dir) === tmpdir() && path.basename(dir).startsWith(TEMP_SOCKET_DIR_PREFIX);
}

/**
 * SECURITY: owner-only even when it already existed: PGlite takes any user as superuser.
 * TRICKY: only the lock holder may call this: a socket file it removes is then a killed holder's.
 */
async function prepareSocketDir(lock: DataDirLock): Promise<string> {
  const preferred = path.join(lock.dataDir, SOCKET_DIR);
  if (Buffer.byteLength(socketPath(preferred)) <= MAX_SOCKET_PATH_BYTES) {
    await mkdir(preferred, { recursive: true, mode: 0o700 });
    await assertOwnDirectory(preferred);
    await chmod(preferred, 0o700);
    await rm(socketPath(preferred), { force: true });
    return preferred;
  }
  // Named after the lock, so the next holder finds and replaces a killed holder's directory.
  const fallback = path.join(tmpdir(), `${TEMP_SOCKET_DIR_PREFIX}${lock.id.slice(0, 16)}`);
  if (Buffer.byteLength(socketPath(fallback)) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `no socket path for the embedded Postgres: both ${preferred} and ${fallback} are too long; use a shorter DATA_DIR or TMPDIR`,
    );
  }
  const leftover = await lstat(fallback).catch(() => undefined);
  if (leftover) {
    await assertOwnDirectory(fallback);
    await rm(fallback, { recursive: true, force: true });
  }
  // Not recursive: fails if someone else made it in between, instead of using their directory.
  await mkdir(fallback, { mode: 0o700 });
  return fallback;
}

async function assertOwnDirectory(dir: string): Promise<void> {
  const stats = await lstat(dir);
  if (!stats.isDirectory() || (process.getuid && stats.uid !== process.getuid())) {
    throw new Error(`${dir} must be a directory owned by this user`);
  }
}

export class EmbeddedPostgresOpenError extends Error {
  constructor(
    readonly databaseDir: string,
    readonly reason: string,
    options: { cause: unknown },
  ) {
    super(`the embedded Postgres could not open ${databaseDir}: ${reason}`, options);
    this.name = 'EmbeddedPostgresOpenError';
  }
}

/** PGlite reports a failed write at start-up as `Aborted()` only: the directory says what went wrong. */
async function openFailure(databaseDir: string, error: unknown): Promise<EmbeddedPostgresOpenError> {
  const first = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  const problem =
    describeWriteError(error) ??
    (await storageProblem(databaseDir).catch((cause) => describeWriteError(cause)));
  const reason = problem
    ? `${problem} (${first})`
    : `${first}; its files may be damaged, or another program may have them open`;
  return new EmbeddedPostgresOpenError(databaseDir, reason, { cause: error });
}

/** One attempt to reopen PGlite on `databaseDir`: only once the directory can take writes again. */
async function reopenAttempt(databaseDir: string): Promise<ReopenAttempt> {
  const problem = await storageProblem(databaseDir).catch(
    (error: unknown) => describeWriteError(error) ?? String(error),
  );
  if (problem) return { problem, kind: 'storage' };
  try {
    return { db: await openPGlite(databaseDir) };
  } catch (error) {
    return { problem: (await openFailure(databaseDir, error)).reason, kind: 'open' };
  }
}

/**
 * PGlite under `<dataDir>/postgres` on a Unix socket, reopened with back-off after a failure.
 * SECURITY: whoever reaches the socket is superuser: owner-only directory, never TCP.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: {
    maxConnections?: number;
    /** The data directory's lock when the caller holds it already (npm start); taken here otherwise. */
    lock?: DataDirLock;
    logger?: EmbeddedPostgresLogger;
  } = {},
): Promise<EmbeddedPostgres> {
  if (options.lock && options.lock.dataDir !== path.resolve(dataDir)) {
    throw new Error(`the lock given is of ${options.lock.dataDir}, not of ${path.resolve(dataDir)}`);
  }
  const logger = options.logger ?? pino({ name: 'embedded-postgres' });
  let ownLock: DataDirLock | undefined;
  if (!options.lock) await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const lock = options.lock ?? (ownLock = await lockDataDir(dataDir));
  const databaseDir = path.join(lock.dataDir, 'postgres');
  let socketDir: string | undefined;
  let db: PGlite | undefined;
  let server: EmbeddedWireServer | undefined;
  const maxConnections = options.maxConnections ?? 8;
  const recovery: {
    current?: PGlite;
    reopening?: Promise<void>;
    lost: (loss: SessionLoss) => void;
  } = { lost: () => undefined };
  const stopping = new AbortController();
  try {
    // Left by earlier versions; nothing reads it.
    await rm(path.join(lock.dataDir, LEGACY_LOCK_FILE), { force: true });
    // Owner only, as Postgres insists for its data directory: it holds e-mails and key hashes.
    await mkdir(databaseDir, { recursive: true, mode: 0o700 });
    await chmod(databaseDir, 0o700);
    socketDir = await prepareSocketDir(lock);
    try {
      db = await openPGlite(databaseDir);
    } catch (error) {
      throw await openFailure(databaseDir, error);
    }
    // TRICKY: PGlite applies its own umask (022) and initdb copies templates as 0666; the directory's
    // 0700 keeps others out, and this brings the files in line.
    await restrictToOwner(databaseDir);
    server = new EmbeddedWireServer(db, maxConnections, (loss) => recovery.lost(loss));
    await server.listen(socketPath(socketDir));
  } catch (error) {
    await server?.stop();
    await db?.close().catch(() => undefined); // A PGlite that aborted may not close either.
    if (socketDir) await removeSocketDir(socketDir);
    await ownLock?.release();
    throw error;
  }
  lock.announce({ postgresSocketDir: socketDir });
  const [startedServer, startedSocketDir] = [server, socketDir];
  recovery.current = db;
  recovery.lost = ({ reason, db: failed }: SessionLoss) => {
    // Never closed (that calls into its runtime); dropped, with the files it held.
    releasePGliteFiles(failed);
    if (recovery.current === failed) recovery.current = undefined;
    recovery.reopening = reopenPGlite(databaseDir, reason, () => reopenAttempt(databaseDir), {
      logger,
      signal: stopping.signal,
    })
      .then(async (reopened) => {
        if (!reopened) return;
        recovery.current = reopened;
        startedServer.resume(reopened);
        await restrictToOwner(databaseDir);
      })
      .catch((error: unknown) => {
        logger.warn(
          { databaseDir, error: String(error) },
          'reopening the embedded Postgres failed; it stays unavailable until a restart',
        );
      });
  };
  return {
    url: connectionUrl(startedSocketDir),
    socketDir: startedSocketDir,
    maxConnections,
    connectInProcess: () => startedServer.connectInProcess(),
    async stop() {
      lock.announce({ postgresSocketDir: undefined });
      try {
        stopping.abort();
        await startedServer.stop();
        await recovery.reopening;
        await recovery.current?.close();
        await restrictToOwner(databaseDir); // What Postgres wrote with fopen() meanwhile is 0644.
        await removeSocketDir(startedSocketDir);
      } finally {
        await ownLock?.release();
      }
    },
  };
}

async function removeSocketDir(socketDir: string): Promise<void> {
  if (isTempSocketDir(socketDir)) await rm(socketDir, { recursive: true, force: true });
  else await rm(socketPath(socketDir), { force: true });
}

/** Strips group and other bits under `root`; symlinks are skipped (chmod would follow them out). */
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
