import type { FastifyInstance, FastifyReply } from 'fastify';
import { BROWSER_ROUTE } from '../cors';
import { errorBody, SERVICE_UNAVAILABLE } from '../error-body';
import { TokenLookupUnavailableError } from '../project-token.cache';
import { SiteAppsUnavailableError, type SiteAppSource } from './site-apps.cache';
import { siteAppScript } from './site-app-script.util';

export interface SiteAppRouteOptions {
  siteApps: SiteAppSource;
}

// PostHog's answer to a site app URL that names nothing (posthog/api/site_app.py).
const MISSING_SITE_APP = errorBody(
  'server_error',
  'missing_site_app_source',
  'Unable to serve site app source code.',
  'site_app',
);

/**
 * What capture serves for site apps (frontend apps) besides the remote config (remote-config.routes.ts):
 * `GET /site_app/:id/:token/:hash/`, the script posthog-js adds for each `siteApps` link of the JSON
 * remote config when it could not load `config.js` (the hash only busts caches; PostHog ignores it too).
 *
 * A browser route: posthog-js adds its scripts with `crossorigin="anonymous"`, so without CORS
 * headers the browser refuses to run them.
 */
export function registerSiteAppRoutes(app: FastifyInstance, options: SiteAppRouteOptions): void {
  const { siteApps } = options;

  const unavailable = (reply: FastifyReply, failure: unknown) => {
    if (!(failure instanceof SiteAppsUnavailableError || failure instanceof TokenLookupUnavailableError)) {
      throw failure;
    }
    // Per request at debug: the caches log the outage once.
    reply.log.debug({ err: failure }, 'site apps unavailable');
    return reply.code(503).send(SERVICE_UNAVAILABLE);
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
        return unavailable(reply, failure);
      }
    },
  );
}
