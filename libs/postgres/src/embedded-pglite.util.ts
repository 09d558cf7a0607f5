import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';

/** The parts of PGlite's Emscripten file system (`PGlite.Module.FS`) a failed PGlite is cleared by. */
interface EmscriptenFileSystem {
  streams: ({ nfd?: number } | null | undefined)[];
  close(stream: { nfd?: number }): void;
}

/**
 * Closes the host files a PGlite that failed still holds, and nothing else: its WASM heap is only
 * memory, which goes with the last reference, but NODEFS keeps a host file descriptor (`nfd`) for
 * every file Postgres opened, and those outlive the object. Left open, they would sit beside the
 * next PGlite's on the same files, and on a full disk keep the space of the WAL segments the next
 * one recycles or removes.
 *
 * TRICKY: only JavaScript runs here. PGlite.close() calls into the WASM runtime (the backend's
 * exit, fflush), and after an abort such a call can spin forever and hold the event loop; so can
 * FS.quit(), which flushes libc's buffers first. What stays unflushed is what a crash loses too.
 */
export function releasePGliteFiles(db: PGlite): void {
  // Undefined when PGlite failed before its runtime was created.
  const fs = (db.Module as unknown as { FS?: EmscriptenFileSystem } | undefined)?.FS;
  for (const stream of fs?.streams ?? []) {
    if (typeof stream?.nfd !== 'number') continue; // Not a host file: a device or a pipe in memory.
    try {
      fs?.close(stream);
    } catch {
      // Closed already, or the host refused: nothing more this process can do with it.
    }
  }
}

/**
 * A PGlite on `databaseDir`, ready; one that fails to open has its files released before the
 * error is thrown (PGlite.create would leave them open until the process ends).
 */
export async function openPGlite(databaseDir: string): Promise<PGlite> {
  const db = new PGlite({ dataDir: databaseDir });
  try {
    await db.waitReady;
    return db;
  } catch (error) {
    releasePGliteFiles(db);
    throw error;
  }
}

/** The first wait between two attempts to reopen; it doubles up to REOPEN_MAX_DELAY_MS. */
export const REOPEN_FIRST_DELAY_MS = 250;
/** Once space is freed, the product answers again at most this long (plus the reopen) later. */
export const REOPEN_MAX_DELAY_MS = 5_000;

/** Where the supervisor logs: pino's `(fields, message)` shape. */
export interface EmbeddedPostgresLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface ReopenAttempt {
  /** What stands in the way, in words (a full filesystem, the open's error); undefined once open. */
  problem?: string;
  /** `storage` when the directory cannot take writes, checked before each open; `open` when PGlite failed. */
  kind?: 'storage' | 'open';
  db?: PGlite;
}

/**
 * Reopens PGlite on `databaseDir` after the last one failed, until it opens or `signal` aborts
 * (undefined then): each attempt is `attempt()` (which checks the directory and opens), with a
 * capped exponential back-off between failures. Postgres replays its WAL when it opens, so what
 * was committed before the failure is there again.
 *
 * Logs once per change of state: the failure, the first failed attempt and each change of the
 * kind of problem (a disk still full is said once, not every few seconds), and the reopening.
 */
export async function reopenPGlite(
  databaseDir: string,
  reason: string,
  attempt: () => Promise<ReopenAttempt>,
  { logger, signal }: { logger: EmbeddedPostgresLogger; signal: AbortSignal },
): Promise<PGlite | undefined> {
  const failedAt = Date.now();
  logger.warn(
    { databaseDir, reason },
    'the embedded Postgres failed: its connections were ended and new ones are refused while it is reopened on the same files',
  );
  let delay = REOPEN_FIRST_DELAY_MS;
  let lastKind: ReopenAttempt['kind'];
  for (let attempts = 1; !signal.aborted; attempts += 1) {
    const { db, problem, kind } = await attempt();
    if (db) {
      if (signal.aborted) {
        await db.close();
        return undefined;
      }
      logger.info(
        { databaseDir, attempts, unavailableMs: Date.now() - failedAt },
        'the embedded Postgres was reopened and takes connections again',
      );
      return db;
    }
    if (kind !== lastKind) {
      logger.warn(
        { databaseDir, problem, retryWithinMs: REOPEN_MAX_DELAY_MS },
        'the embedded Postgres cannot be reopened yet; trying again until it can',
      );
      lastKind = kind;
    }
    await sleep(delay, undefined, { signal }).catch(() => undefined);
    delay = Math.min(delay * 2, REOPEN_MAX_DELAY_MS);
  }
  return undefined;
}
