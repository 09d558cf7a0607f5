import { Pool, type PoolConfig } from 'pg';
import type { Logger } from 'pino';

/**
 * POSTGRES_TIMEOUTS (kept equal by the spec; that lib brings TypeORM) but a short connection wait, as an
 * SDK waits on the answer; `query_timeout` bounds the embedded Postgres, which ignores the rest.
 */
export const CAPTURE_POOL_TIMEOUTS = {
  statement_timeout: 30_000,
  lock_timeout: 10_000,
  idle_in_transaction_session_timeout: 60_000,
  query_timeout: 45_000,
  connectionTimeoutMillis: 2_000,
} as const satisfies PoolConfig;

/**
 * TRICKY: pg emits 'error' on the pool when an idle connection dies; unheard, it crashes the
 * process, and capture must outlive Postgres outages.
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
