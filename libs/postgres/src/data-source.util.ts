import type { PoolConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { guardDataSource } from './connection-guard';
import { ENTITIES } from './entities';
import { migratePostgres, MIGRATIONS_TABLE } from './migration-runner.util';
import { MIGRATIONS } from './migrations';

export {
  CrossConnectionQueryError,
  guardDataSource,
  PostgresQueryTimeoutError,
  type ConnectionGuardOptions,
} from './connection-guard';

/**
 * Bounds on every Postgres connection of every app (management, capture, ingestion), so that no
 * statement, lock wait or forgotten transaction can hold a connection, and then a whole pool, for
 * good. Each is far above what a legitimate statement takes here: requests touch a handful of rows
 * by index, the event listing reads ClickHouse, ingestion writes persons in batches, and flag
 * actions read persons 5,000 at a time. Migrations are exempt (see migratePostgres).
 */
export interface PostgresTimeouts {
  /** Server side (statement_timeout): cancels a statement that runs longer. */
  statementTimeoutMs: number;
  /** Server side (lock_timeout): fails a statement that waits longer for a row or table lock. */
  lockTimeoutMs: number;
  /** Server side (idle_in_transaction_session_timeout): ends a session left idle in a transaction. */
  idleInTransactionTimeoutMs: number;
  /**
   * Client side: fails a query that has not answered, connection wait included. Longer than the
   * statement timeout, so a real server cancels first and the connection survives; it is what
   * bounds the embedded Postgres, which honours none of the server-side timeouts.
   */
  queryTimeoutMs: number;
  /** Client side: bounds opening a connection, and waiting for one when the pool is exhausted. */
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
 * The node-postgres pool options that apply `timeouts` to every connection of a `pg.Pool`.
 *
 * NOTE: the server-side ones travel as startup parameters. The embedded Postgres (PGlite) ignores
 * startup parameters, which is what keeps it alive: a `SET idle_in_transaction_session_timeout`
 * hangs PGlite for good (postgres-timeouts.integration-spec.ts pins that they stay inert). A plain
 * pg.Pool releases a client with the error of its failed query, so a client-side timeout discards
 * the connection instead of handing a still-busy one to the next caller.
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

/**
 * Opens a data source and brings its schema up to date. Its queries are guarded and bounded
 * (guardDataSource): a query on another connection inside a transaction throws at once.
 */
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
