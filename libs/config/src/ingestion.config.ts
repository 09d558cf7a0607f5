import { type AppsRuntimeConfig, loadAppsRuntimeConfig } from './apps.config';
import { ClickHouseConfig, loadClickHouseConfig } from './clickhouse.config';
import { Environment, readEnum, readInteger, readPort, readString, readUrl } from './env.util';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { LOG_LEVELS, type DatabaseConfig, type LogLevel } from './management.config';
import { readMetricsToken } from './metrics-token.config';

export interface IngestionConfig {
  /** `/_health`, `/_ready` and `/metrics` only. */
  host: string;
  port: number;
  /** Required in split mode (npm start passes the embedded one's). */
  database: DatabaseConfig;
  logLevel: LogLevel;
  kafka: KafkaConfig;
  clickhouse: ClickHouseConfig;
  apps: AppsRuntimeConfig;
  metricsToken: string | undefined;
}

export function loadIngestionConfig(env: Environment = process.env): IngestionConfig {
  return {
    host: readString(env, 'INGESTION_HOST', '127.0.0.1'),
    port: readPort(env, 'INGESTION_PORT', 8020),
    database: {
      url: readUrl(env, 'DATABASE_URL', ['postgres', 'postgresql'])?.toString(),
      poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1),
    },
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    kafka: loadKafkaConfig(env),
    clickhouse: loadClickHouseConfig(env),
    apps: loadAppsRuntimeConfig(env),
    metricsToken: readMetricsToken(env),
  };
}
