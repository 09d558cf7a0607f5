import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BROWSER_ROUTE } from '../cors';
import { matchesEtag } from '../etag.util';
import { errorBody, SERVICE_UNAVAILABLE } from '../error-body';
import { TokenLookupUnavailableError, type ProjectTokens } from '../project-token.cache';
import { RemoteConfigUnavailableError, type RemoteConfigSource } from './remote-config.cache';

export interface RemoteConfigRouteOptions {
  remoteConfig: RemoteConfigSource;
  tokens: ProjectTokens;
}

const UNKNOWN_TOKEN = errorBody('invalid_request', 'not_found', 'No project has this token.');

/**
 * Browsers and CDNs may keep a copy but must ask again before each use: a settings change reaches
 * the next page load, and an unchanged config costs a 304 without a body.
 */
const CACHE_CONTROL = 'public, no-cache';

/**
 * The remote config posthog-js ≥ 1.17x and the mobile SDKs load at start, in place of `/decide`:
 * - `GET /array/:token/config`: the JSON (remote-config.ts);
 * - `GET /array/:token/config.js`: the same as a script assigning `window._POSTHOG_REMOTE_CONFIG[token]`,
 *   with the project's site apps inline; posthog-js loads it first and falls back to the JSON.
 * Both carry an ETag and answer `If-None-Match` with 304. An unknown token is 404, as PostHog's
 * Django view answers it.
 */
export function registerRemoteConfigRoutes(app: FastifyInstance, options: RemoteConfigRouteOptions): void {
  const { remoteConfig, tokens } = options;

  const remote =
    (form: 'json' | 'script') =>
    async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
      const script = form === 'script';
      if (script) void reply.type('application/javascript');
      try {
        const teamId = await tokens.resolve(request.params.token);
        const entry = teamId === null ? null : await remoteConfig.forTeam(teamId);
        if (!entry) {
          return await (script
            ? reply.code(404).send('/* No project has this token. */')
            : reply.code(404).send(UNKNOWN_TOKEN));
        }
        const { body, etag } = script ? entry.script : entry.json;
        void reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
        if (matchesEtag(request.headers['if-none-match'], etag)) return await reply.code(304).send();
        if (!script) void reply.type('application/json; charset=utf-8');
        return await reply.send(body);
      } catch (failure) {
        if (!(
          failure instanceof RemoteConfigUnavailableError || failure instanceof TokenLookupUnavailableError
        )) {
          throw failure;
        }
        // Per request at debug: the caches log the outage once.
        reply.log.debug({ err: failure }, 'remote config unavailable');
        void reply.header('Cache-Control', 'no-store');
        return script
          ? reply.code(503).send('/* Transient error, please retry. */')
          : reply.code(503).send(SERVICE_UNAVAILABLE);
      }
    };

  app.get<{ Params: { token: string } }>('/array/:token/config', { config: BROWSER_ROUTE }, remote('json'));
  app.get<{ Params: { token: string } }>(
    '/array/:token/config.js',
    { config: BROWSER_ROUTE },
    remote('script'),
  );
  app.options('/array/:token/config', { config: BROWSER_ROUTE }, async (_request, reply) =>
    reply.code(200).send({}),
  );
}
