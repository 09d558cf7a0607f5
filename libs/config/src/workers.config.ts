import path from 'node:path';
import { type AppsRuntimeConfig, loadAppsRuntimeConfig } from './apps.config';
import { ClickHouseConfig, loadClickHouseConfig } from './clickhouse.config';
import { type EgressConfig, loadEgressConfig } from './egress.config';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { Environment, readBoolean, readEnum, readInteger, readPort, readString, readUrl } from './env.util';
import { LOG_LEVELS, type DatabaseConfig, type LogLevel } from './management.config';
import { readEncryptionKeys } from './secret-box';
import { readMetricsToken } from './metrics-token.config';

export interface WorkersConfig {
  /** Where the workers serve `/_health`, `/_ready` and `/metrics` (they have no other HTTP). */
  host: string;
  port: number;
  /** Exports, runs and the job queue; required in split mode (npm start passes the embedded one's). */
  database: DatabaseConfig;
  clickhouse: ClickHouseConfig;
  /**
   * Ingestion's Kafka (brokers, consumer group): a run starts only once ingestion has processed
   * every event captured before its interval's end. Required in split mode.
   */
  kafka: KafkaConfig;
  /** What opens the sealed destination configs: the same keys as the management API's. */
  encryptionKeys: Buffer[] | undefined;
  dataDir: string;
  logLevel: LogLevel;
  /** METRICS_TOKEN: `/metrics` needs it as a Bearer credential when set. */
  metricsToken: string | undefined;
  /** Runs this process executes at once. */
  concurrency: number;
  /**
   * How late after an interval's end an event may be captured and still belong to that interval
   * (by its timestamp); its run starts then, once ingestion has processed those events. An event
   * captured later belongs to the interval it arrived in.
   */
  exportLagSeconds: number;
  /**
   * Bounds on each ClickHouse query of a batch-export run, which carries the member's `hogql_query`:
   * a run past one fails with a message saying which (BATCH_EXPORT_QUERY_MAX_*).
   */
  batchExportQueryLimits: BatchExportQueryLimits;
  /** How the import apps run (their sandbox limits, the keys that open their secret config values). */
  apps: AppsRuntimeConfig;
  /**
   * The period of `runEveryMinute` (PostHog's is a minute); hours and days stay real ones. Shorter
   * only to see an import app work without waiting (tests, demos).
   */
  appsScheduleTickSeconds: number;
  /** Where batch-export destinations may connect. */
  egress: EgressConfig;
  /**
   * BATCH_EXPORT_S3_SERVER_CREDENTIALS: an S3 export without keys of its own runs with this
   * server's AWS identity (environment, shared config, instance or container role). Off, such a
   * run fails: every member could write with the operator's identity to any bucket it reaches.
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
 * A run's queries stream (the rows go to the destination as ClickHouse writes them), so the result
 * bound is per query, generous: a chunk, or a whole interval for Parquet without max_file_size_mb.
 * Memory is the listing's 2 GB: sorts spill to disk past half of it. Half an hour per query
 * leaves room for a slow destination, which holds the query while it takes the rows.
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
