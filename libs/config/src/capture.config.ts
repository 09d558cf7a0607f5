import { Environment, readBoolean, readEnum, readInteger, readPort, readString, readUrl } from './env.util';
import { KafkaConfig, loadKafkaConfig } from './kafka.config';
import { LOG_LEVELS, type LogLevel } from './management.config';
import { readMetricsToken } from './metrics-token.config';

export interface CaptureConfig {
  host: string;
  port: number;
  /** Split mode; the standalone app passes its own. */
  databaseUrl: string | undefined;
  /** Token lookups, and persons for the SDKs' flag calls. */
  databasePoolSize: number;
  /** Bytes: BATCH_BODY_SIZE of `rust/capture/src/router.rs`. */
  batchBodyLimit: number;
  eventBodyLimit: number;
  /** Against gzip bombs. */
  maxDecodedBytes: number;
  trustProxy: boolean;
  logLevel: LogLevel;
  /** node:cluster processes when capture runs alone; 1: this process only. */
  workers: number;
  kafka: KafkaConfig;
  metricsToken: string | undefined;
}

export function loadCaptureConfig(env: Environment = process.env): CaptureConfig {
  return {
    host: readString(env, 'CAPTURE_HOST', '127.0.0.1'),
    port: readPort(env, 'CAPTURE_PORT', 8010),
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres', 'postgresql'])?.toString(),
    databasePoolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1),
    batchBodyLimit: readInteger(env, 'CAPTURE_BATCH_BODY_LIMIT', 20 * 1024 * 1024, 1024),
    eventBodyLimit: readInteger(env, 'CAPTURE_EVENT_BODY_LIMIT', 2 * 1024 * 1024, 1024),
    maxDecodedBytes: readInteger(env, 'CAPTURE_MAX_DECODED_BYTES', 100 * 1024 * 1024, 1024),
    trustProxy: readBoolean(env, 'TRUST_PROXY', false),
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    workers: readInteger(env, 'CAPTURE_WORKERS', 1, 1),
    kafka: loadKafkaConfig(env),
    metricsToken: readMetricsToken(env),
  };
}
