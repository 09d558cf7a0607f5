export * from './env.util';
export * from './management.config';
export * from './standalone.config';
export * from './clickhouse.config';
export * from './kafka.config';
export * from './capture.config';
export * from './process-lifecycle.util';
export * from './log-redaction.util';
