import { CaptureConfig, loadCaptureConfig } from './capture.config';
import { ClickHouseConfig } from './clickhouse.config';
import { Environment, readString } from './env.util';
import { IngestionConfig, loadIngestionConfig } from './ingestion.config';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { loadManagementConfig, ManagementConfig } from './management.config';
import { loadWorkersConfig, WorkersConfig } from './workers.config';

/** Small and fixed: the embedded Postgres refuses every connection past its limit. */
export const STANDALONE_CAPTURE_POOL_SIZE = 4;
export const STANDALONE_INGESTION_POOL_SIZE = 3;
export const STANDALONE_WORKERS_POOL_SIZE = 2;
/** The job engine's own connections (pg-boss) in npm start. */
export const STANDALONE_JOB_ENGINE_CONNECTIONS = 2;

export interface StandaloneConfig {
  management: ManagementConfig;
  capture: CaptureConfig;
  ingestion: IngestionConfig;
  /** The management app's Postgres, keys and data directory. */
  workers: WorkersConfig;
  clickhouse: ClickHouseConfig;
  kafka: KafkaConfig;
  /** The admin the first start creates. */
  initialAdminEmail: string;
}

/**
 * DATABASE_URL, DATABASE_POOL_SIZE and LOG_LEVEL are the management app's; the pipeline gets small
 * pools of its own, and ingestion no probe port (the management port answers for the process).
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
