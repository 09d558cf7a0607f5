import { Pool } from 'pg';
import type { Logger } from 'pino';
import { BATCH_EXPORT_DESTINATIONS } from '@hogbase/batch-exports';
import { closeClickHouse, createClickHouse } from '@hogbase/clickhouse';
import { ConfigError, openSecretBox, type WorkersConfig } from '@hogbase/config';
import { postgresPoolTimeouts } from '@hogbase/postgres';
import type { WorkersEngines } from './workers.service';

export interface OpenedWorkersEngines extends WorkersEngines {
  /** After the service stopped: ClickHouse, then Postgres. */
  close(): Promise<void>;
}

/**
 * The workers' Postgres pool: every connection bounded by the Postgres timeouts, and a listener
 * for idle connections that die (unheard, pg's 'error' event would end the process).
 */
export function createWorkersPool(url: string, poolSize: number, logger: Logger): Pool {
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    application_name: 'workers',
    ...postgresPoolTimeouts(),
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  return pool;
}

/**
 * What the workers run on alone (split mode): the Postgres of DATABASE_URL (the management API's),
 * a ClickHouse server (chDB's data path belongs to the one process that opened it), and the keys
 * that open destination configs. Connects nothing yet.
 */
export async function openWorkersEngines(
  config: WorkersConfig,
  logger: Logger,
  databaseUrl = config.database.url,
): Promise<OpenedWorkersEngines> {
  if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required when the workers run alone');
  const pool = createWorkersPool(databaseUrl, config.database.poolSize, logger);
  const clickhouse = createClickHouse(config.clickhouse);
  return {
    pool,
    databaseUrl,
    clickhouse,
    secrets: await openSecretBox(config.encryptionKeys, config.dataDir),
    destinations: BATCH_EXPORT_DESTINATIONS,
    logger,
    async close() {
      await closeClickHouse(clickhouse);
      await pool.end();
    },
  };
}
