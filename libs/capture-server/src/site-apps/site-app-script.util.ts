import { createHash } from 'node:crypto';

/** A site app (frontend app) enabled for a project: what capture serves to its pages. */
export interface SiteApp {
  /** The plugin config's id: what posthog-js names the app by (`window['__$$ph_site_app_<id>']`). */
  id: number;
  /** The unguessable part of the app's URL. */
  webToken: string;
  /** `(function () { let exports = {}; …; return exports; })`, as the install stored site.ts. */
  transpiled: string;
  /** The values of the config fields whose schema says `site: true`: what `inject` receives. */
  config: Record<string, unknown>;
}

/** One entry of `siteApps` in the remote config (`/decide`, `/flags?config=true`, `/array/:token/config`). */
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
 * The config a page may see, as PostHog's `get_site_config_from_schema`: each field with
 * `site: true`, its value or else its default.
 *
 * SECURITY: a `secret: true` field is never served, even marked `site`: its stored value is the
 * sealed `{ sealed: "…" }` form (and a secret has no business in a public script). A value still
 * in that form (a field turned secret after it was set) is left out for the same reason.
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

/**
 * The md5 in the app's URL. It covers everything the served script is made of, so a new source or
 * config gives a new URL and a browser or CDN cache never serves the old script under it.
 */
export function siteAppHash(app: SiteApp): string {
  return createHash('md5')
    .update(`${app.id}\n${app.transpiled}\n${JSON.stringify(app.config)}`)
    .digest('hex');
}

export function siteAppLink(app: SiteApp): SiteAppLink {
  return { id: app.id, url: `/site_app/${app.id}/${app.webToken}/${siteAppHash(app)}/`, type: 'site_app' };
}

/**
 * What `GET /site_app/:id/:token/:hash/` serves, as PostHog does: the app's function called, then
 * `inject` with its site config and the posthog instance posthog-js left on `window` before it
 * added the script tag.
 */
export function siteAppScript(app: SiteApp): string {
  return `${app.transpiled}().inject({config:${JSON.stringify(app.config)},posthog:window['__$$ph_site_app_${app.id}']})`;
}

/**
 * One element of `siteApps` in `/array/:token/config.js`: a loader posthog-js ≥ 1.17x calls with
 * `{ posthog, callback }` (lib/src/site-apps.js `setupSiteApp`), instead of adding a script per app.
 *
 * NOTE: PostHog calls `config.callback()` with no argument, which posthog-js reads as a failure
 * (`errored = !success`) and then never replays the events captured before the app loaded; this
 * passes `true`. An app whose `inject` throws is reported by posthog-js itself (it catches init).
 */
export function siteAppLoader(app: SiteApp): string {
  return `{id:${JSON.stringify(String(app.id))},init:function(config){${app.transpiled}().inject({config:${JSON.stringify(app.config)},posthog:config.posthog});config.callback(true);return {}}}`;
}

/**
 * `/array/:token/config.js`: posthog-js loads it as a script (`loadExternalDependency('remote-config')`)
 * and reads `window._POSTHOG_REMOTE_CONFIG[token]`. The apps travel as loaders there, so the
 * JSON config's `siteApps` links are dropped from it, as PostHog does.
 */
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
