import type { PoolConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { guardDataSource } from './connection-guard.util';
import { ENTITIES } from './entities';
import { migratePostgres, MIGRATIONS_TABLE } from './migration-runner.util';
import { MIGRATIONS } from './migrations';

/**
 * Bounds on every Postgres connection of every app, far above what a legitimate statement takes
 * here, so that nothing can hold a connection (and then a pool) for good. Migrations are exempt.
 */
export interface PostgresTimeouts {
  /** statement_timeout */
  statementTimeoutMs: number;
  /** lock_timeout */
  lockTimeoutMs: number;
  /** idle_in_transaction_session_timeout */
  idleInTransactionTimeoutMs: number;
  /**
   * Client side, connection wait included: longer than the statement timeout so that a real server
   * cancels first; it is what bounds the embedded Postgres.
   */
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
 * NOTE: the server-side bounds travel as startup parameters, which PGlite ignores, and that keeps it
 * alive: a `SET idle_in_transaction_session_timeout` hangs PGlite for good. A plain pg.Pool releases
 * a client with its query's error, so a client-side timeout discards the connection.
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
  // TRICKY: pg's own query_timeout is left out here. TypeORM releases a runner without the error,
  // so the pool would keep a connection whose query is still running and hand it to the next
  // request; the guard (guardDataSource) bounds queries itself and closes the connection instead.
  const { query_timeout: _clientSide, ...pool } = postgresPoolTimeouts(options.timeouts);
  return {
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: MIGRATIONS_TABLE,
    migrationsTransactionMode: 'each',
    // NOTE: never synchronize; the schema is what the migrations say.
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
