import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { SiteAppsUnavailableError } from '../capture.errors';
import { ExpiringLookup, OutageLog, type ExpiringLookupOptions } from '../expiring-lookup.util';
import { siteConfigFromSchema, type SiteApp } from './site-app-script.util';

export interface SiteAppsCacheOptions extends ExpiringLookupOptions {
  logger?: Pick<Logger, 'warn' | 'info'>;
}

export interface SiteAppSource {
  /** None unless the project has `inject_web_apps`. */
  forTeam(teamId: number): Promise<SiteApp[]>;
  find(id: number, webToken: string): Promise<SiteApp | null>;
  /** Every project when null. */
  forget(teamId: number | null): void;
}

interface SiteAppRow {
  id: number;
  team_id: number;
  web_token: string;
  config: unknown;
  config_schema: unknown;
  transpiled: string;
}

// SECURITY: a config of another organization's app (code_pinned_at set) serves the copy of site.ts
// and schema its admin enabled or upgraded to, never what the app's organization wrote since.
const SITE_APPS_QUERY = `
  SELECT c.id, c.team_id, c.web_token, c.config,
    CASE WHEN c.code_pinned_at IS NULL THEN p.config_schema ELSE c.pinned_config_schema END AS config_schema,
    CASE WHEN c.code_pinned_at IS NULL THEN f.transpiled ELSE c.pinned_site_code END AS transpiled
  FROM plugin_configs c
  JOIN teams t ON t.id = c.team_id AND t.inject_web_apps
  JOIN plugins p ON p.id = c.plugin_id
  LEFT JOIN plugin_source_files f ON c.code_pinned_at IS NULL AND f.plugin_id = p.id
    AND f.filename = 'site.ts' AND f.status = 'TRANSPILED'
  WHERE c.enabled AND NOT c.deleted
    AND (CASE WHEN c.code_pinned_at IS NULL THEN f.transpiled ELSE c.pinned_site_code END) IS NOT NULL`;

const toSiteApp = (row: SiteAppRow): SiteApp => ({
  id: row.id,
  webToken: row.web_token,
  transpiled: row.transpiled,
  config: siteConfigFromSchema(row.config_schema, row.config),
});

/** During a Postgres outage what was read before is served on; what never was raises SiteAppsUnavailableError. */
export class SiteAppsCache implements SiteAppSource {
  private readonly teams: ExpiringLookup<number, SiteApp[]>;
  private readonly apps: ExpiringLookup<string, SiteApp | null>;

  constructor(pool: Pool, options: SiteAppsCacheOptions = {}, now: () => number = Date.now) {
    const outage = new OutageLog(options.logger, {
      failing:
        'site apps reads failing: apps read before are served from the cache, others get 503 until Postgres answers',
      answering: 'site apps reads answer again',
    });
    const unavailable = (cause: unknown) => new SiteAppsUnavailableError(cause);
    this.teams = new ExpiringLookup(
      async (teamId) => {
        const result = await pool.query<SiteAppRow>(
          `${SITE_APPS_QUERY} AND c.team_id = $1 ORDER BY c."order", c.id`,
          [teamId],
        );
        return result.rows.map(toSiteApp);
      },
      unavailable,
      options,
      outage,
      now,
    );
    this.apps = new ExpiringLookup(
      async (key) => {
        const slash = key.indexOf('/');
        const result = await pool.query<SiteAppRow>(`${SITE_APPS_QUERY} AND c.id = $1 AND c.web_token = $2`, [
          Number(key.slice(0, slash)),
          key.slice(slash + 1),
        ]);
        const row = result.rows[0];
        return row ? toSiteApp(row) : null;
      },
      unavailable,
      options,
      outage,
      now,
    );
  }

  forTeam(teamId: number): Promise<SiteApp[]> {
    return this.teams.get(teamId);
  }

  find(id: number, webToken: string): Promise<SiteApp | null> {
    // Out of Postgres's integer range, or a NUL byte: Postgres's error would read as an outage (503).
    if (!Number.isSafeInteger(id) || id < 1 || id > 2_147_483_647) return Promise.resolve(null);
    if (webToken.includes('\0')) return Promise.resolve(null);
    return this.apps.get(`${id}/${webToken}`);
  }

  forget(teamId: number | null): void {
    if (teamId === null) this.teams.forget();
    else this.teams.forget(teamId);
    // Keyed by URL, not project: a change anywhere drops them all.
    this.apps.forget();
  }
}
