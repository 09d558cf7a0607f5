import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { openSecretBox, type AppsRuntimeConfig, type SecretBox } from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import { SandboxPool, type SandboxPoolNotice } from '@hogbase/apps-sandbox';
import type { AppServices } from './app-instance.service';
import { boundedFetch } from './bounded-fetch.util';
import { EnabledApps, type SecretOpener } from './enabled-apps.cache';
import { openGeoIp } from './geoip.client';
import { PluginCache } from './plugin-cache.store';
import { PluginLogWriter } from './plugin-log.repository';
import { PluginStorage } from './plugin-storage.repository';

export interface AppsRuntime {
  apps: EnabledApps;
  log: PluginLogWriter;
  services: AppServices;
  close(): Promise<void>;
}

/** Created on first use: no key file otherwise. */
function secretOpener(config: AppsRuntimeConfig): SecretOpener {
  let box: Promise<SecretBox> | undefined;
  return {
    async open(sealed) {
      box ??= openSecretBox(config.encryptionKeys, config.dataDir).catch((error: unknown) => {
        box = undefined;
        throw error;
      });
      return (await box).open(sealed);
    },
  };
}

interface Shared<T> {
  value: T;
  users: number;
}

/**
 * NOTE: the sandbox threads and the cache belong to the process: under `npm start` ingestion and the
 * workers each create a runtime, and the budgets hold for both together.
 */
const sharedPools = new Map<string, Shared<SandboxPool>>();
const sharedCaches = new Map<string, Shared<PluginCache>>();

function acquire<T>(registry: Map<string, Shared<T>>, key: string, create: () => T): T {
  let shared = registry.get(key);
  if (!shared) {
    shared = { value: create(), users: 0 };
    registry.set(key, shared);
  }
  shared.users += 1;
  return shared.value;
}

/** The last user's release gets it back, to close it. */
function release<T>(registry: Map<string, Shared<T>>, key: string): T | undefined {
  const shared = registry.get(key);
  if (!shared) return undefined;
  shared.users -= 1;
  if (shared.users > 0) return undefined;
  registry.delete(key);
  return shared.value;
}

/** Evictions at most once a minute, with their count. */
function poolNotices(logger: Logger): (notice: SandboxPoolNotice) => void {
  let evictions = 0;
  let lastEvictionLog = 0;
  return (notice) => {
    if (notice.type === 'thread-failed') {
      logger.error(
        { reason: notice.message, sandboxes: notice.sandboxes },
        'an apps sandbox thread failed: its calls failed and a new thread replaces it',
      );
      return;
    }
    evictions += 1;
    if (Date.now() - lastEvictionLog < 60_000) return;
    lastEvictionLog = Date.now();
    logger.info(
      { evictions, reservedBytes: notice.reservedBytes },
      'apps sandboxes unloaded to stay within APPS_SANDBOXES_MEMORY_MB (they load again at their next call)',
    );
    evictions = 0;
  };
}

/** `extra` adds capture and jobs. */
export function createAppsRuntime(
  pool: Pool,
  config: AppsRuntimeConfig,
  logger: Logger,
  extra: Pick<AppServices, 'capture' | 'enqueueJob' | 'updateMetric'> = {},
): AppsRuntime {
  const log = new PluginLogWriter(pool, logger, randomUUID());
  const poolKey = `${config.threads}/${config.sandboxesMemoryBytes}`;
  const sandboxes = acquire(
    sharedPools,
    poolKey,
    () =>
      new SandboxPool({
        threads: config.threads,
        memoryBudgetBytes: config.sandboxesMemoryBytes,
        budgetName: 'APPS_SANDBOXES_MEMORY_MB',
        onNotice: poolNotices(logger),
      }),
  );
  const cacheKey = `${config.cacheBytes}/${config.cacheBytesPerApp}`;
  const cache = acquire(
    sharedCaches,
    cacheKey,
    () => new PluginCache({ maxBytes: config.cacheBytes, maxBytesPerNamespace: config.cacheBytesPerApp }),
  );
  const services: AppServices = {
    storage: new PluginStorage(pool, {
      maxBytesPerConfig: config.storageBytesPerConfig,
      maxValueBytes: config.storageValueMaxBytes,
    }),
    cache,
    log,
    sandboxes,
    fetch: boundedFetch({
      timeoutMs: config.fetchTimeoutMs,
      maxResponseBytes: config.fetchMaxResponseBytes,
      egress: new EgressPolicy(config.egress),
    }),
    geoip: config.geoipDatabasePath ? openGeoIp(config.geoipDatabasePath) : undefined,
    memoryLimitBytes: config.memoryLimitBytes,
    timeLimitMs: config.timeLimitMs,
    callCpuMs: config.callCpuMs,
    timeouts: { backoffMs: config.timeoutBackoffMs, disableAfter: config.timeoutsBeforeDisable },
    disable: async (app, reason) => {
      await pool.query(
        `UPDATE plugin_configs
         SET enabled = false, updated_at = now(), error = jsonb_build_object('message', $2::text, 'time', now())
         WHERE id = $1 AND enabled`,
        [app.pluginConfigId, `disabled: ${reason}`],
      );
      logger.warn(
        { pluginConfigId: app.pluginConfigId, reason },
        'pipeline app disabled after repeated timeouts',
      );
    },
    ...extra,
  };
  const apps = new EnabledApps(pool, services, secretOpener(config), logger);
  return {
    apps,
    log,
    services,
    async close() {
      await apps.stop();
      await log.close();
      release(sharedCaches, cacheKey);
      await release(sharedPools, poolKey)?.close();
    },
  };
}
