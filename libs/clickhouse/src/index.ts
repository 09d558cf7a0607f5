export {
  ClickHouseEngineError,
  closeClickHouse,
  createClickHouse,
  openClickHouse,
  type ClickHouseClient,
  type ClickHouseConnectionConfig,
} from './clickhouse.client';
export { insertEvents, readEvents, rowContentErrorName, type EventsWriter } from './events.repository';
export { EVENTS_TABLE, EVENTS_TABLE_COLUMNS, type EventRow } from './event-row.types';
export { fromClickHouseDateTime64, toClickHouseDateTime64 } from './clickhouse-datetime.util';
export {
  ClickHouseMigrationError,
  loadClickHouseMigrations,
  migrateClickHouse,
  pendingClickHouseMigrations,
} from './migration-runner.util';
export {
  exceededQueryLimit,
  queryLimitSettings,
  type ExceededQueryLimit,
  type QueryLimits,
} from './query-limits.util';
export { assertDatabaseName } from './sql-identifier.util';
