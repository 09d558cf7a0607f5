export {
  describeDatabase,
  loadManagementConfig,
  type DatabaseConfig,
  type LogLevel,
  type ManagementConfig,
} from './management.config';
export { loadCaptureConfig, type CaptureConfig } from './capture.config';
export { loadIngestionConfig, type IngestionConfig } from './ingestion.config';
export { DEFAULT_BATCH_EXPORT_QUERY_LIMITS, loadWorkersConfig, type WorkersConfig } from './workers.config';
export {
  loadStandaloneConfig,
  STANDALONE_JOB_ENGINE_CONNECTIONS,
  type StandaloneConfig,
} from './standalone.config';
export { describeClickHouse, loadClickHouseConfig, type ClickHouseConfig } from './clickhouse.config';
export { loadKafkaConfig, type KafkaConfig } from './kafka.config';
export { loadAppsRuntimeConfig, type AppsRuntimeConfig } from './apps.config';

export { ConfigError, readInteger, readString, readUrl, type Environment } from './env.util';
export { runMain } from './process-lifecycle.util';

export { openSecretBox, SecretBox } from './secret-box.util';
export { redactHeaders, redactQuery, redactUrl } from './log-redaction.util';
