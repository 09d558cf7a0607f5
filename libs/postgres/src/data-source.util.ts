import type { PoolConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { guardDataSource } from './connection-guard.util';
import { ENTITIES } from './entities';
import { migratePostgres, MIGRATIONS_TABLE } from './migration-runner.util';
import { MIGRATIONS } from './migrations';

/** Far above any legitimate statement, so nothing holds a connection for good; migrations are exempt. */
export interface PostgresTimeouts {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  /** Client side, connection wait included; above statement_timeout so a real server cancels first. */
  queryTimeoutMs: number;
  /** Client side: opening a connection, or waiting for one from an exhausted pool. */
  connectionTimeoutMs: number;
}

export const POSTGRES_TIMEOUTS: Readonly<PostgresTimeouts> = Object.freeze({
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 10_000,
  idleInTransactionTimeoutMs: 60_000,
  queryTimeoutMs: 45_000,
  connectionTimeoutMs: 10_000,
});

/**
 * NOTE: server-side bounds travel as startup parameters, which PGlite ignores (a SET of
 * idle_in_transaction_session_timeout hangs it). pg.Pool discards a client whose query timed out.
 */
export function postgresPoolTimeouts(
  timeouts: Readonly<PostgresTimeouts> = POSTGRES_TIMEOUTS,
): Pick<
  PoolConfig,
  | 'statement_timeout'
  | 'lock_timeout'
  | 'idle_in_transaction_session_timeout'
  | 'query_timeout'
  | 'connectionTimeoutMillis'
> {
  return {
    statement_timeout: timeouts.statementTimeoutMs,
    lock_timeout: timeouts.lockTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
    query_timeout: timeouts.queryTimeoutMs,
    connectionTimeoutMillis: timeouts.connectionTimeoutMs,
  };
}

export interface PostgresConnectionOptions {
  url: string;
  poolSize?: number;
  applicationName?: string;
  /** Tests shorten these to watch them fire. */
  timeouts?: Readonly<PostgresTimeouts>;
}

export function postgresDataSourceOptions(options: PostgresConnectionOptions): DataSourceOptions {
  // TRICKY: no pg query_timeout: TypeORM releases a runner without the error, so the pool would reuse a
  // connection still running its query; guardDataSource bounds queries and closes the connection.
  const { query_timeout: _clientSide, ...pool } = postgresPoolTimeouts(options.timeouts);
  return {
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: options.applicationName ?? 'hogbase',
    extra: { max: options.poolSize ?? 10, ...pool },
  };
}

/** Brought up to date, and guarded (guardDataSource). */
export async function openDataSource(options: PostgresConnectionOptions): Promise<DataSource> {
  const dataSource = new DataSource(postgresDataSourceOptions(options));
  const timeouts = options.timeouts ?? POSTGRES_TIMEOUTS;
  guardDataSource(dataSource, {
    queryTimeoutMs: timeouts.queryTimeoutMs,
    idleInTransactionTimeoutMs: timeouts.idleInTransactionTimeoutMs,
  });
  await dataSource.initialize();
  try {
    await migratePostgres(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}
