import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { RemoteConfigUnavailableError, SiteAppsUnavailableError } from '../capture.errors';
import { ExpiringLookup, OutageLog, type ExpiringLookupOptions } from '../expiring-lookup.util';
import type { SiteAppSource } from '../site-apps/site-apps.cache';
import { remoteConfigScript, siteAppLink } from '../site-apps/site-app-script.util';
import { jsonText, type JsonText } from '../openapi/documented-route.util';
import { buildRemoteConfig, flagsConfigFields, type ProjectSdkSettings } from './remote-config.presenter';
import type { FlagsConfigFields, RemoteConfig } from './remote-config.dto';

export interface RemoteConfigEntry {
  config: RemoteConfig;
  /** What `/flags?config=true` and `/decide` add to the flags. */
  flagsFields: FlagsConfigFields;
  json: { body: JsonText<RemoteConfig>; etag: string };
  script: { body: string; etag: string };
}

export interface RemoteConfigSource {
  /** Null when the project is gone. */
  forTeam(teamId: number): Promise<RemoteConfigEntry | null>;
  /** Every project when null. */
  forget(teamId: number | null): void;
}

export interface RemoteConfigCacheOptions extends ExpiringLookupOptions {
  logger?: Pick<Logger, 'warn' | 'info'>;
}

interface SettingsRow {
  api_token: string;
  autocapture_opt_out: boolean;
  autocapture_exceptions_opt_in: boolean;
  autocapture_web_vitals_opt_in: boolean;
  autocapture_web_vitals_allowed_metrics: string[] | null;
  capture_performance_opt_in: boolean;
  capture_dead_clicks: boolean;
  heatmaps_opt_in: boolean;
  has_feature_flags: boolean;
}

const SETTINGS_QUERY = `
  SELECT t.api_token, t.autocapture_opt_out, t.autocapture_exceptions_opt_in,
         t.autocapture_web_vitals_opt_in, t.autocapture_web_vitals_allowed_metrics,
         t.capture_performance_opt_in, t.capture_dead_clicks, t.heatmaps_opt_in,
         EXISTS (SELECT 1 FROM feature_flags f WHERE f.team_id = t.id AND f.active AND NOT f.deleted)
           AS has_feature_flags
  FROM teams t WHERE t.id = $1`;

const toSettings = (row: SettingsRow): ProjectSdkSettings => ({
  token: row.api_token,
  autocaptureOptOut: row.autocapture_opt_out,
  autocaptureExceptionsOptIn: row.autocapture_exceptions_opt_in,
  autocaptureWebVitalsOptIn: row.autocapture_web_vitals_opt_in,
  autocaptureWebVitalsAllowedMetrics: row.autocapture_web_vitals_allowed_metrics,
  capturePerformanceOptIn: row.capture_performance_opt_in,
  captureDeadClicks: row.capture_dead_clicks,
  heatmapsOptIn: row.heatmaps_opt_in,
  hasFeatureFlags: row.has_feature_flags,
});

const etagOf = (body: string) => `"${createHash('sha1').update(body).digest('base64url')}"`;

/**
 * Each project's remote config, built once and served with an ETag until `forget` (a change
 * notification); `ttlMs` only bounds staleness if one is missed.
 */
export class RemoteConfigCache implements RemoteConfigSource {
  private readonly lookup: ExpiringLookup<number, RemoteConfigEntry | null>;

  constructor(
    pool: Pool,
    private readonly siteApps: SiteAppSource,
    options: RemoteConfigCacheOptions = {},
    now: () => number = Date.now,
  ) {
    const outage = new OutageLog(options.logger, {
      failing:
        'remote config reads failing: configs built before are served from the cache, others get 503 until Postgres answers',
      answering: 'remote config reads answer again',
    });
    this.lookup = new ExpiringLookup(
      (teamId) => this.build(pool, teamId),
      (cause) => new RemoteConfigUnavailableError(cause),
      { ttlMs: 60_000, ...options },
      outage,
      now,
    );
  }

  forTeam(teamId: number): Promise<RemoteConfigEntry | null> {
    return this.lookup.get(teamId);
  }

  forget(teamId: number | null): void {
    if (teamId === null) this.lookup.forget();
    else this.lookup.forget(teamId);
  }

  private async build(pool: Pool, teamId: number): Promise<RemoteConfigEntry | null> {
    const [{ rows }, apps] = await Promise.all([
      pool.query<SettingsRow>(SETTINGS_QUERY, [teamId]),
      this.siteApps.forTeam(teamId).catch((failure: unknown) => {
        throw failure instanceof SiteAppsUnavailableError ? failure.cause : failure;
      }),
    ]);
    const row = rows[0];
    if (!row) return null;
    const config = buildRemoteConfig(toSettings(row), apps.map(siteAppLink));
    const json = jsonText(config);
    const script = remoteConfigScript(row.api_token, config, apps);
    return {
      config,
      flagsFields: flagsConfigFields(config),
      json: { body: json, etag: etagOf(json) },
      script: { body: script, etag: etagOf(script) },
    };
  }
}
