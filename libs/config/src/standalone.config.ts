import { CaptureConfig, loadCaptureConfig } from './capture.config';
import { ClickHouseConfig } from './clickhouse.config';
import { Environment, readString } from './env.util';
import { IngestionConfig, loadIngestionConfig } from './ingestion.config';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { loadManagementConfig, ManagementConfig } from './management.config';
import { loadWorkersConfig, WorkersConfig } from './workers.config';

/**
 * Postgres connections of the pipeline in npm start, besides the management app's
 * DATABASE_POOL_SIZE: the embedded Postgres refuses every connection past its limit, so the
 * pipeline's pools are small and fixed.
 */
export const STANDALONE_CAPTURE_POOL_SIZE = 4;
export const STANDALONE_INGESTION_POOL_SIZE = 3;
export const STANDALONE_WORKERS_POOL_SIZE = 2;
/** The job engine's own connections (pg-boss) in npm start. */
export const STANDALONE_JOB_ENGINE_CONNECTIONS = 2;

export interface StandaloneConfig {
  management: ManagementConfig;
  capture: CaptureConfig;
  ingestion: IngestionConfig;
  /** Batch exports: the management app's Postgres, keys and data directory, the shared ClickHouse. */
  workers: WorkersConfig;
  /** Shared by ingestion (writes) and the management app (the event listing). */
  clickhouse: ClickHouseConfig;
  /** `brokers` undefined: the in-process bus carries events from capture to ingestion. */
  kafka: KafkaConfig;
  /** E-mail of the admin the first start creates. */
  initialAdminEmail: string;
}

/**
 * The four services' configs over one environment. DATABASE_URL, DATABASE_POOL_SIZE and LOG_LEVEL
 * are the management app's; capture and ingestion get the same Postgres (or the embedded one's URL
 * at start-up) through small pools of their own, and ingestion serves no probe port (the
 * management port answers for the process).
 */
export function loadStandaloneConfig(env: Environment = process.env): StandaloneConfig {
  const management = loadManagementConfig(env);
  const { clickhouse } = management;
  const kafka = loadKafkaConfig(env);
  const capture = { ...loadCaptureConfig(env), databasePoolSize: STANDALONE_CAPTURE_POOL_SIZE, kafka };
  const ingestion: IngestionConfig = {
    ...loadIngestionConfig(env),
    database: { url: management.database.url, poolSize: STANDALONE_INGESTION_POOL_SIZE },
    clickhouse,
    kafka,
  };
  const workers: WorkersConfig = {
    ...loadWorkersConfig(env),
    database: { url: management.database.url, poolSize: STANDALONE_WORKERS_POOL_SIZE },
    clickhouse,
    encryptionKeys: management.encryptionKeys,
    dataDir: management.dataDir,
  };
  return {
    management,
    capture,
    ingestion,
    workers,
    clickhouse,
    kafka,
    initialAdminEmail: readString(env, 'INITIAL_ADMIN_EMAIL', 'admin@hogbase.local'),
  };
}
