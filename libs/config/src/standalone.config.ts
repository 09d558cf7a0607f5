import { CaptureConfig, loadCaptureConfig } from './capture.config';
import { ClickHouseConfig, loadClickHouseConfig } from './clickhouse.config';
import { Environment, readString } from './env.util';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { loadManagementConfig, ManagementConfig } from './management.config';

export interface StandaloneConfig {
  management: ManagementConfig;
  capture: CaptureConfig;
  clickhouse: ClickHouseConfig;
  /** `brokers` undefined: the in-process bus carries events from capture to ingestion. */
  kafka: KafkaConfig;
  /** E-mail of the admin the first start creates. */
  initialAdminEmail: string;
}

export function loadStandaloneConfig(env: Environment = process.env): StandaloneConfig {
  const management = loadManagementConfig(env);
  return {
    management,
    capture: loadCaptureConfig(env),
    clickhouse: loadClickHouseConfig({ ...env, DATA_DIR: management.dataDir }),
    kafka: loadKafkaConfig(env),
    initialAdminEmail: readString(env, 'INITIAL_ADMIN_EMAIL', 'admin@hogbase.local'),
  };
}
