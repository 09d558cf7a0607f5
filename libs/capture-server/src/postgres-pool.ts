import { Pool } from 'pg';
import type { Logger } from 'pino';

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
    connectionTimeoutMillis: 2_000,
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  return pool;
}
