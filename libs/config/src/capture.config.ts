import { Environment, readBoolean, readEnum, readInteger, readPort, readString, readUrl } from './env.util';
import type { LogLevel } from './management.config';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface CaptureConfig {
  host: string;
  port: number;
  /** Postgres for project-token lookups (split mode); the standalone app passes its own. */
  databaseUrl: string | undefined;
  /** `/batch/` body limit in bytes (the spec: less than 20 MB). */
  batchBodyLimit: number;
  /** Body limit of every other capture path. */
  eventBodyLimit: number;
  /** Bound on a decompressed payload, against gzip bombs. */
  maxDecodedBytes: number;
  trustProxy: boolean;
  logLevel: LogLevel;
}

export function loadCaptureConfig(env: Environment = process.env): CaptureConfig {
  return {
    host: readString(env, 'CAPTURE_HOST', '127.0.0.1'),
    port: readPort(env, 'CAPTURE_PORT', 8010),
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres', 'postgresql'])?.toString(),
    batchBodyLimit: readInteger(env, 'CAPTURE_BATCH_BODY_LIMIT', 20 * 1024 * 1024, 1024),
    eventBodyLimit: readInteger(env, 'CAPTURE_EVENT_BODY_LIMIT', 2 * 1024 * 1024, 1024),
    maxDecodedBytes: readInteger(env, 'CAPTURE_MAX_DECODED_BYTES', 100 * 1024 * 1024, 1024),
    trustProxy: readBoolean(env, 'TRUST_PROXY', false),
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
  };
}
