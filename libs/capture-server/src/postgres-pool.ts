import { Pool, type PoolConfig } from 'pg';
import type { Logger } from 'pino';

/**
 * The bounds every Postgres connection of capture carries: libs/postgres's POSTGRES_TIMEOUTS
 * (capture may not import that library, which brings TypeORM; postgres-pool.spec.ts keeps the two
 * equal), except the wait for a connection, kept short because an SDK is waiting on the answer.
 *
 * The server-side ones (statement, lock, idle in transaction) bound a real Postgres; the embedded
 * one ignores them, and `query_timeout` bounds it from the client. pg releases a client whose
 * query failed with the error, so a timed-out connection is discarded, never reused half-busy.
 */
export const CAPTURE_POOL_TIMEOUTS = {
  statement_timeout: 30_000,
  lock_timeout: 10_000,
  idle_in_transaction_session_timeout: 60_000,
  query_timeout: 45_000,
  connectionTimeoutMillis: 2_000,
} as const satisfies PoolConfig;

/**
 * The capture app's Postgres pool: token lookups, and the persons and flags of SDK flag calls.
 *
 * TRICKY: pg emits 'error' on the pool when an idle connection dies (Postgres restarted or
 * terminated it); without a listener that event crashes the process. Capture must outlive
 * Postgres outages, so the error is logged and the next query reconnects.
 */
export function createCapturePool(url: string, logger: Pick<Logger, 'warn'>, max = 4): Pool {
  const pool = new Pool({
    connectionString: url,
    max,
    application_name: 'capture',
    ...CAPTURE_POOL_TIMEOUTS,
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  return pool;
}
