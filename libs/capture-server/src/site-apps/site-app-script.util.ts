import { createHash } from 'node:crypto';

export interface SiteApp {
  /** The plugin config's id: posthog-js names the app `window['__$$ph_site_app_<id>']`. */
  id: number;
  /** The unguessable part of the app's URL. */
  webToken: string;
  /** `(function () { let exports = {}; …; return exports; })`, as the install stored site.ts. */
  transpiled: string;
  /** The fields marked `site: true`: what `inject` receives. */
  config: Record<string, unknown>;
}

export interface SiteAppLink {
  id: number;
  url: string;
  type: 'site_app';
}

interface SchemaField {
  key?: unknown;
  site?: unknown;
  secret?: unknown;
  default?: unknown;
}

/**
 * As `get_site_config_from_schema` (posthog/plugins/site.py). SECURITY: never a `secret: true` field,
 * even marked `site`, nor a value still sealed: a secret has no business in a public script.
 */
export function siteConfigFromSchema(schema: unknown, config: unknown): Record<string, unknown> {
  if (!Array.isArray(schema)) return {};
  const values = config !== null && typeof config === 'object' ? (config as Record<string, unknown>) : {};
  const site: Record<string, unknown> = {};
  for (const field of schema as SchemaField[]) {
    if (field === null || typeof field !== 'object') continue;
    if (field.site !== true || typeof field.key !== 'string' || field.key === '' || field.secret === true) {
      continue;
    }
    const value = Object.hasOwn(values, field.key) ? values[field.key] : (field.default ?? null);
    if (isSealed(value)) continue;
    site[field.key] = value;
  }
  return site;
}

function isSealed(value: unknown): boolean {
  return value !== null && typeof value === 'object' && Object.hasOwn(value, 'sealed');
}

/** Covers everything the script is made of, so a cache never serves an old script under a new URL. */
export function siteAppHash(app: SiteApp): string {
  return createHash('md5')
    .update(`${app.id}\n${app.transpiled}\n${JSON.stringify(app.config)}`)
    .digest('hex');
}

export function siteAppLink(app: SiteApp): SiteAppLink {
  return { id: app.id, url: `/site_app/${app.id}/${app.webToken}/${siteAppHash(app)}/`, type: 'site_app' };
}

/** `GET /site_app/:id/:token/:hash/`, as posthog/api/site_app.py serves it. */
export function siteAppScript(app: SiteApp): string {
  return `${app.transpiled}().inject({config:${JSON.stringify(app.config)},posthog:window['__$$ph_site_app_${app.id}']})`;
}

/**
 * A `siteApps` loader for posthog-js's `setupSiteApp`. NOTE: it calls `callback(true)`: PostHog's bare
 * `callback()` reads as a failure, and posthog-js then never replays the events captured before.
 */
export function siteAppLoader(app: SiteApp): string {
  return `{id:${JSON.stringify(String(app.id))},init:function(config){${app.transpiled}().inject({config:${JSON.stringify(app.config)},posthog:config.posthog});config.callback(true);return {}}}`;
}

/** `/array/:token/config.js`: the apps travel as loaders, so the JSON's `siteApps` links are dropped. */
export function remoteConfigScript(
  token: string,
  config: Record<string, unknown>,
  apps: readonly SiteApp[],
): string {
  const { siteApps: _links, ...scriptConfig } = config;
  return [
    '(function() {',
    '  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};',
    `  window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(token)}] = {`,
    `    config: ${JSON.stringify(scriptConfig)},`,
    `    siteApps: [${apps.map(siteAppLoader).join(',')}]`,
    '  };',
    '})();',
  ].join('\n');
}
