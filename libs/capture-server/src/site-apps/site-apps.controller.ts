import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { UNAVAILABLE_RESPONSE } from '../capture.dto';
import { errorBody, ErrorBodySchema, SERVICE_UNAVAILABLE } from '../error-body.dto';
import { documentedRoute, javascript, ref, type OperationDoc } from '../openapi/documented-route.util';
import { SiteAppsUnavailableError, TokenLookupUnavailableError } from '../capture.errors';
import type { SiteAppSource } from './site-apps.cache';
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

const SITE_APP_OPERATION = {
  operationId: 'site_app_retrieve',
  summary: "A site app's script",
  description:
    'What posthog-js adds for each `siteApps` link of the remote config when it could not load `config.js`: ' +
    "the app's code and its site config, calling `inject` on load.",
  tags: ['remote-config'],
  params: Type.Object({
    id: Type.String({ description: "The site app's plugin config id." }),
    token: Type.String({ description: "The app's web token (the unguessable part of its URL)." }),
    hash: Type.String({ description: 'Busts caches; not read.' }),
  }),
  response: {
    200: javascript('The script.'),
    404: ref(ErrorBodySchema, 'No enabled site app has this id and token (`missing_site_app_source`).'),
    503: UNAVAILABLE_RESPONSE,
  },
} satisfies OperationDoc;

/**
 * `GET /site_app/:id/:token/:hash/` (the hash only busts caches, as in PostHog). A browser route:
 * posthog-js adds the script with `crossorigin="anonymous"`, so without CORS it would not run.
 */
export function registerSiteAppRoutes(app: FastifyInstance, options: SiteAppRouteOptions): void {
  const { siteApps } = options;

  documentedRoute(app, {
    method: 'GET',
    url: '/site_app/:id/:token/:hash/',
    doc: SITE_APP_OPERATION,
    browser: true,
    handler: async (request, reply) => {
      const { id, token } = request.params;
      try {
        const found = /^\d{1,10}$/.test(id) ? await siteApps.find(Number(id), token) : null;
        if (!found) return await reply.code(404).send(MISSING_SITE_APP);
        return await reply.type('application/javascript').code(200).send(siteAppScript(found));
      } catch (failure) {
        if (!(
          failure instanceof SiteAppsUnavailableError || failure instanceof TokenLookupUnavailableError
        )) {
          throw failure;
        }
        reply.log.debug({ err: failure }, 'site apps unavailable');
        return reply.code(503).send(SERVICE_UNAVAILABLE);
      }
    },
  });
}
