import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { BROWSER_ROUTE } from '../cors';
import { TokenLookupUnavailableError } from '../project-token.cache';
import { SiteAppsUnavailableError, type SiteAppSource } from './site-apps.cache';
import { remoteConfigScript, siteAppLink, siteAppScript, type SiteAppLink } from './site-app-script.util';

interface Tokens {
  resolve(token: string): Promise<number | null>;
}

export interface SiteAppRouteOptions {
  siteApps: SiteAppSource;
  tokens: Tokens;
  logger: Logger;
}

const error = (type: string, code: string, detail: string, attr: string | null = null) => ({
  type,
  code,
  detail,
  attr,
});
const UNAVAILABLE = error('server_error', 'service_unavailable', 'Transient error, please retry.');
// PostHog's answer to a site app URL that names nothing (posthog/api/site_app.py).
const MISSING_SITE_APP = error(
  'server_error',
  'missing_site_app_source',
  'Unable to serve site app source code.',
  'site_app',
);
const UNKNOWN_TOKEN = error('invalid_request', 'not_found', 'No project has this token.');

/**
 * The remote config posthog-js ≥ 1.17x loads at init from `/array/:token/config(.js)` in place of
 * `/decide`: everything this server does not offer is off, as in `/decide`'s answer.
 *
 * NOTE: the full remote config (flags presence, recordings, surveys…) is another piece of work;
 * this one carries what site apps need. `hasFeatureFlags` is left out on purpose: posthog-js
 * skips its `/flags` call only when it reads `false`.
 */
export function remoteConfig(token: string, siteApps: readonly SiteAppLink[]): Record<string, unknown> {
  return {
    token,
    supportedCompression: ['gzip', 'gzip-js'],
    captureDeadClicks: false,
    capturePerformance: false,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    sessionRecording: false,
    heatmaps: false,
    surveys: false,
    siteApps,
  };
}

/**
 * What capture serves for site apps (frontend apps):
 * - `GET /site_app/:id/:token/:hash/`, the script posthog-js adds for each `siteApps` link of the
 *   JSON remote config (the hash only busts caches; PostHog ignores it too);
 * - `GET /array/:token/config`, the JSON remote config with those links;
 * - `GET /array/:token/config.js`, the same config as a script carrying each app's code inline,
 *   which is what posthog-js 1.449 loads first (its JSON is the fallback when the script fails).
 *
 * All are browser routes: posthog-js adds its scripts with `crossorigin="anonymous"`, so without
 * CORS headers the browser refuses to run them.
 */
export function registerSiteAppRoutes(app: FastifyInstance, options: SiteAppRouteOptions): void {
  const { siteApps, tokens } = options;

  const unavailable = (reply: FastifyReply, failure: unknown, javascript: boolean) => {
    if (!(failure instanceof SiteAppsUnavailableError || failure instanceof TokenLookupUnavailableError)) {
      throw failure;
    }
    // Per request at debug: the caches log the outage once.
    reply.log.debug({ err: failure }, 'site apps unavailable');
    if (javascript) {
      return reply.code(503).type('application/javascript').send('/* Transient error, please retry. */');
    }
    return reply.code(503).send(UNAVAILABLE);
  };

  app.get<{ Params: { id: string; token: string; hash: string } }>(
    '/site_app/:id/:token/:hash',
    { config: BROWSER_ROUTE },
    async (request, reply) => {
      const { id, token } = request.params;
      try {
        const found = /^\d{1,10}$/.test(id) ? await siteApps.find(Number(id), token) : null;
        if (!found) return await reply.code(404).send(MISSING_SITE_APP);
        return await reply.type('application/javascript').send(siteAppScript(found));
      } catch (failure) {
        return unavailable(reply, failure, false);
      }
    },
  );

  const remote =
    (javascript: boolean) =>
    async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
      const { token } = request.params;
      try {
        const teamId = await tokens.resolve(token);
        if (teamId === null) {
          return javascript
            ? await reply.code(404).type('application/javascript').send('/* No project has this token. */')
            : await reply.code(404).send(UNKNOWN_TOKEN);
        }
        const apps = await siteApps.forTeam(teamId);
        const config = remoteConfig(token, apps.map(siteAppLink));
        return javascript
          ? await reply.type('application/javascript').send(remoteConfigScript(token, config, apps))
          : await reply.send(config);
      } catch (failure) {
        return unavailable(reply, failure, javascript);
      }
    };
  app.get<{ Params: { token: string } }>('/array/:token/config', { config: BROWSER_ROUTE }, remote(false));
  app.get<{ Params: { token: string } }>('/array/:token/config.js', { config: BROWSER_ROUTE }, remote(true));
  app.options('/array/:token/config', { config: BROWSER_ROUTE }, async (_request, reply) =>
    reply.code(200).send({}),
  );
}
