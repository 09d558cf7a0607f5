import path from 'node:path';
import { type EgressConfig, loadEgressConfig } from './egress.config';
import { readEncryptionKeys } from './secret-box.util';
import { ConfigError, type Environment, readInteger, readString } from './env.util';

export interface AppsRuntimeConfig {
  memoryLimitBytes: number;
  /** One call of an app, including the host work it awaits (fetch, storage). */
  timeLimitMs: number;
  /** The call's own execution time; its wall clock is `timeLimitMs`. */
  callCpuMs: number;
  /** None start before an app is loaded. */
  threads: number;
  /** All sandboxes together: each holds `memoryLimitBytes` of it. */
  sandboxesMemoryBytes: number;
  /** Doubled at each timeout in a row. */
  timeoutBackoffMs: number;
  timeoutsBeforeDisable: number;
  /** Keys, values and list elements, per app and project, and of all apps. */
  cacheBytesPerApp: number;
  cacheBytes: number;
  /** Keys and values as stored. */
  storageBytesPerConfig: number;
  storageValueMaxBytes: number;
  /** Also bounds the webhooks the host sends for `composeWebhook`. */
  fetchTimeoutMs: number;
  fetchMaxResponseBytes: number;
  /** The management API's keys, which sealed the apps' secret fields. */
  encryptionKeys: Buffer[] | undefined;
  dataDir: string;
  /** A MaxMind City database (.mmdb) for `meta.geoip`; unset, apps' lookups answer null. */
  geoipDatabasePath: string | undefined;
  egress: EgressConfig;
}

const MB = 1024 * 1024;

export function loadAppsRuntimeConfig(env: Environment = process.env): AppsRuntimeConfig {
  const memoryLimitMb = readInteger(env, 'APPS_MEMORY_LIMIT_MB', 64, 8);
  const sandboxesMemoryMb = readInteger(env, 'APPS_SANDBOXES_MEMORY_MB', 512, 8);
  if (sandboxesMemoryMb < memoryLimitMb) {
    throw new ConfigError(
      'APPS_SANDBOXES_MEMORY_MB',
      String(sandboxesMemoryMb),
      `must be at least APPS_MEMORY_LIMIT_MB (${memoryLimitMb}): it holds every sandbox`,
    );
  }
  const cacheMb = readInteger(env, 'APPS_CACHE_MB', 64, 1);
  const cacheMbPerApp = readInteger(env, 'APPS_CACHE_MB_PER_APP', 8, 1);
  if (cacheMbPerApp > cacheMb) {
    throw new ConfigError(
      'APPS_CACHE_MB_PER_APP',
      String(cacheMbPerApp),
      `must not exceed APPS_CACHE_MB (${cacheMb})`,
    );
  }
  const storageMbPerConfig = readInteger(env, 'APPS_STORAGE_MB_PER_CONFIG', 10, 1);
  const storageValueMaxKb = readInteger(env, 'APPS_STORAGE_VALUE_MAX_KB', 1024, 1);
  if (storageValueMaxKb > storageMbPerConfig * 1024) {
    throw new ConfigError(
      'APPS_STORAGE_VALUE_MAX_KB',
      String(storageValueMaxKb),
      `must not exceed APPS_STORAGE_MB_PER_CONFIG (${storageMbPerConfig} MB)`,
    );
  }
  return {
    memoryLimitBytes: memoryLimitMb * MB,
    timeLimitMs: readInteger(env, 'APPS_TIME_LIMIT_MS', 30_000, 100),
    callCpuMs: readInteger(env, 'APPS_CALL_CPU_MS', 1_000, 10),
    threads: readInteger(env, 'APPS_THREADS', 2, 1),
    sandboxesMemoryBytes: sandboxesMemoryMb * MB,
    timeoutBackoffMs: readInteger(env, 'APPS_TIMEOUT_BACKOFF_MS', 10_000, 0),
    timeoutsBeforeDisable: readInteger(env, 'APPS_TIMEOUTS_BEFORE_DISABLE', 5, 1),
    cacheBytesPerApp: cacheMbPerApp * MB,
    cacheBytes: cacheMb * MB,
    storageBytesPerConfig: storageMbPerConfig * MB,
    storageValueMaxBytes: storageValueMaxKb * 1024,
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
