import path from 'node:path';
import { type EgressConfig, loadEgressConfig } from './egress.config';
import { readEncryptionKeys } from './secret-box';
import { type Environment, readInteger, readString } from './env.util';

/** How pipeline apps run where they run (ingestion's destinations, the workers' import apps). */
export interface AppsRuntimeConfig {
  /** The heap of one app's sandbox. */
  memoryLimitBytes: number;
  /** One call of an app, including the host work it awaits (fetch, storage). */
  timeLimitMs: number;
  /** One `fetch` of an app, or one webhook the host sends for `composeWebhook`. */
  fetchTimeoutMs: number;
  fetchMaxResponseBytes: number;
  /** Opens the secret fields of app configs (sealed by the management API with the same keys). */
  encryptionKeys: Buffer[] | undefined;
  dataDir: string;
  /** A MaxMind City database (.mmdb) for `meta.geoip`; unset, apps' lookups answer null. */
  geoipDatabasePath: string | undefined;
  /** Where apps' `fetch` and composeWebhook deliveries may go. */
  egress: EgressConfig;
}

export function loadAppsRuntimeConfig(env: Environment = process.env): AppsRuntimeConfig {
  return {
    memoryLimitBytes: readInteger(env, 'APPS_MEMORY_LIMIT_MB', 64, 8) * 1024 * 1024,
    timeLimitMs: readInteger(env, 'APPS_TIME_LIMIT_MS', 30_000, 100),
    fetchTimeoutMs: readInteger(env, 'APPS_FETCH_TIMEOUT_MS', 10_000, 100),
    fetchMaxResponseBytes: readInteger(env, 'APPS_FETCH_MAX_RESPONSE_MB', 5, 1) * 1024 * 1024,
    encryptionKeys: readEncryptionKeys(env),
    dataDir: path.resolve(readString(env, 'DATA_DIR', './.data')),
    geoipDatabasePath: optionalPath(readString(env, 'GEOIP_DATABASE_PATH')),
    egress: loadEgressConfig(env),
  };
}

function optionalPath(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : path.resolve(value);
}
