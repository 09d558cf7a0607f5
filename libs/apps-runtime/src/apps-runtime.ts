import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { openSecretBox, type AppsRuntimeConfig, type SecretBox } from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import type { AppServices } from './app-instance';
import { boundedFetch } from './bounded-fetch';
import { EnabledApps, type SecretOpener } from './enabled-apps';
import { openGeoIp } from './geoip';
import { PluginCache } from './plugin-cache';
import { PluginLogWriter } from './plugin-log';
import { PluginStorage } from './plugin-storage';

export interface AppsRuntime {
  apps: EnabledApps;
  log: PluginLogWriter;
  services: AppServices;
  /** Tears the apps down and writes the last log lines. */
  close(): Promise<void>;
}

/** Opens secret config values with the SecretBox, created on first use (no key file otherwise). */
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

/** What a service that runs apps needs, over its Postgres pool; `extra` adds capture and jobs. */
export function createAppsRuntime(
  pool: Pool,
  config: AppsRuntimeConfig,
  logger: Logger,
  extra: Pick<AppServices, 'capture' | 'enqueueJob' | 'updateMetric'> = {},
): AppsRuntime {
  const log = new PluginLogWriter(pool, logger, randomUUID());
  const services: AppServices = {
    storage: new PluginStorage(pool),
    cache: new PluginCache(),
    log,
    fetch: boundedFetch({
      timeoutMs: config.fetchTimeoutMs,
      maxResponseBytes: config.fetchMaxResponseBytes,
      egress: new EgressPolicy(config.egress),
    }),
    geoip: config.geoipDatabasePath ? openGeoIp(config.geoipDatabasePath) : undefined,
    memoryLimitBytes: config.memoryLimitBytes,
    timeLimitMs: config.timeLimitMs,
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
    },
  };
}
