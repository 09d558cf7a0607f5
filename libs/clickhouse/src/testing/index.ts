export * from './test-clickhouse.util';
