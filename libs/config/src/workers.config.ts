import path from 'node:path';
import { type AppsRuntimeConfig, loadAppsRuntimeConfig } from './apps.config';
import { ClickHouseConfig, loadClickHouseConfig } from './clickhouse.config';
import { type EgressConfig, loadEgressConfig } from './egress.config';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { Environment, readBoolean, readEnum, readInteger, readPort, readString, readUrl } from './env.util';
import { LOG_LEVELS, type DatabaseConfig, type LogLevel } from './management.config';
import { readEncryptionKeys } from './secret-box.util';
import { readMetricsToken } from './metrics-token.config';

export interface WorkersConfig {
  /** `/_health`, `/_ready` and `/metrics` only. */
  host: string;
  port: number;
  /** Required in split mode (npm start passes the embedded one's). */
  database: DatabaseConfig;
  clickhouse: ClickHouseConfig;
  /** Ingestion's: a run starts once ingestion processed every event captured before the interval's end. */
  kafka: KafkaConfig;
  /** The management API's keys, which sealed the destination configs. */
  encryptionKeys: Buffer[] | undefined;
  dataDir: string;
  logLevel: LogLevel;
  metricsToken: string | undefined;
  concurrency: number;
  /** How late an event may be captured and still belong to its interval; the run starts then. */
  exportLagSeconds: number;
  /** Each query carries the member's `hogql_query`: a run past a bound fails saying which. */
  batchExportQueryLimits: BatchExportQueryLimits;
  apps: AppsRuntimeConfig;
  /** `runEveryMinute`'s period; shorter only for tests and demos. */
  appsScheduleTickSeconds: number;
  egress: EgressConfig;
  /**
   * SECURITY: off, an S3 export without keys fails: every member could otherwise write with the
   * operator's AWS identity to any bucket it reaches.
   */
  batchExportS3ServerCredentials: boolean;
}

/** The shape of `QueryLimits` (@hogbase/clickhouse), which config does not depend on. */
export interface BatchExportQueryLimits {
  maxExecutionSeconds: number;
  maxMemoryBytes: number;
  maxResultBytes: number;
}

/**
 * Queries stream, so the result bound is per query and generous (a whole interval for Parquet); sorts
 * spill past half the memory; a slow destination holds the query while it takes the rows.
 */
export const DEFAULT_BATCH_EXPORT_QUERY_LIMITS: BatchExportQueryLimits = {
  maxExecutionSeconds: 1_800,
  maxMemoryBytes: 2_000_000_000,
  maxResultBytes: 10 * 1024 ** 3,
};

export function loadWorkersConfig(env: Environment = process.env): WorkersConfig {
  return {
    host: readString(env, 'WORKERS_HOST', '127.0.0.1'),
    port: readPort(env, 'WORKERS_PORT', 8030),
    database: {
      url: readUrl(env, 'DATABASE_URL', ['postgres', 'postgresql'])?.toString(),
      poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 5, 2),
    },
    clickhouse: loadClickHouseConfig(env),
    kafka: loadKafkaConfig(env),
    encryptionKeys: readEncryptionKeys(env),
    dataDir: path.resolve(readString(env, 'DATA_DIR', './.data')),
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    metricsToken: readMetricsToken(env),
    concurrency: readInteger(env, 'WORKERS_CONCURRENCY', 2, 1),
    exportLagSeconds: readInteger(env, 'BATCH_EXPORT_LAG_SECONDS', 60, 0),
    batchExportQueryLimits: {
      maxExecutionSeconds: readInteger(
        env,
        'BATCH_EXPORT_QUERY_MAX_EXECUTION_SECONDS',
        DEFAULT_BATCH_EXPORT_QUERY_LIMITS.maxExecutionSeconds,
        1,
      ),
      maxMemoryBytes: readInteger(
        env,
        'BATCH_EXPORT_QUERY_MAX_MEMORY_BYTES',
        DEFAULT_BATCH_EXPORT_QUERY_LIMITS.maxMemoryBytes,
        1024 * 1024,
      ),
      maxResultBytes: readInteger(
        env,
        'BATCH_EXPORT_QUERY_MAX_RESULT_BYTES',
        DEFAULT_BATCH_EXPORT_QUERY_LIMITS.maxResultBytes,
        1024 * 1024,
      ),
    },
    apps: loadAppsRuntimeConfig(env),
    appsScheduleTickSeconds: readInteger(env, 'APPS_SCHEDULE_TICK_SECONDS', 60, 1),
    egress: loadEgressConfig(env),
    batchExportS3ServerCredentials: readBoolean(env, 'BATCH_EXPORT_S3_SERVER_CREDENTIALS', false),
  };
}
