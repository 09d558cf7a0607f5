import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';

interface EmscriptenFileSystem {
  streams: ({ nfd?: number } | null | undefined)[];
  close(stream: { nfd?: number }): void;
}

/**
 * Closes the host descriptors NODEFS keeps for a failed PGlite (they would hold a full disk's space).
 * TRICKY: JavaScript only: close() and FS.quit() call the WASM runtime, which can spin after an abort.
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

/** One that fails to open has its files released first (PGlite.create would keep them open). */
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

export const REOPEN_FIRST_DELAY_MS = 250;
/** Once space is freed, the product answers again at most this long (plus the reopen) later. */
export const REOPEN_MAX_DELAY_MS = 5_000;

export interface EmbeddedPostgresLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface ReopenAttempt {
  /** In words; undefined once open. */
  problem?: string;
  kind?: 'storage' | 'open';
  db?: PGlite;
}

/** Retries with capped back-off until it opens or `signal` aborts; logs each change of state once. */
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
