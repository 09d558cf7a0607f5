export * from './clickhouse.client';
export * from './clickhouse-datetime.util';
export * from './event-row';
export * from './events.repository';
export * from './migration-runner';
export * from './query-limits.util';
export * from './sql-identifier.util';
