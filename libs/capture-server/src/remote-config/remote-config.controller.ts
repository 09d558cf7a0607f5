import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { preflightOperation, RETRY_AFTER_HEADER, UNAVAILABLE_RESPONSE } from '../capture.dto';
import { matchesEtag } from '../etag.util';
import { errorBody, ErrorBodySchema, SERVICE_UNAVAILABLE } from '../error-body.dto';
import {
  documentedRoute,
  javascript,
  jsonWithHeaders,
  noContent,
  ref,
  type OperationDoc,
} from '../openapi/documented-route.util';
import { RemoteConfigUnavailableError, TokenLookupUnavailableError } from '../capture.errors';
import type { ProjectTokens } from '../project-token.cache';
import type { RemoteConfigSource } from './remote-config.cache';
import { RemoteConfigSchema } from './remote-config.dto';

export interface RemoteConfigRouteOptions {
  remoteConfig: RemoteConfigSource;
  tokens: ProjectTokens;
}

const UNKNOWN_TOKEN = errorBody('invalid_request', 'not_found', 'No project has this token.');

/** A settings change reaches the next page load; an unchanged config costs a 304. */
const CACHE_CONTROL = 'public, no-cache';

const TOKEN_PARAMS = Type.Object({ token: Type.String({ description: "The project's API key (`phc_…`)." }) });
const IF_NONE_MATCH = Type.Object({
  'if-none-match': Type.Optional(Type.String({ description: 'The ETag of an earlier answer.' })),
});
const CACHING_HEADERS = {
  etag: Type.String({ description: 'The version of the answer; send it back in `If-None-Match`.' }),
  'cache-control': Type.String({ description: '`public, no-cache`: kept, but asked again before each use.' }),
};
const NOT_MODIFIED = noContent('Unchanged since the ETag sent in `If-None-Match`.', CACHING_HEADERS);

export const SCRIPT_NOT_FOUND = {
  description:
    'No project has this token (a script comment); or the path is not served, e.g. a parameter longer ' +
    'than 100 characters (the JSON error body).',
  content: {
    'application/javascript': { schema: Type.String() },
    'application/json': { schema: ref(ErrorBodySchema) },
  },
};

export const SCRIPT_UNAVAILABLE = javascript(
  'Postgres is unavailable for a project not cached: a script comment; retry later.',
  RETRY_AFTER_HEADER,
);

const CONFIG_OPERATION = {
  operationId: 'array_config_retrieve',
  summary: "The project's remote config",
  description:
    'What posthog-js ≥ 1.17x and the mobile SDKs load at start, in place of `/decide`. Answers ' +
    '`If-None-Match` with 304.',
  tags: ['remote-config'],
  params: TOKEN_PARAMS,
  headers: IF_NONE_MATCH,
  response: {
    200: jsonWithHeaders('The remote config.', ref(RemoteConfigSchema), CACHING_HEADERS),
    304: NOT_MODIFIED,
    404: ref(ErrorBodySchema, 'No project has this token (`not_found`).'),
    503: UNAVAILABLE_RESPONSE,
  },
} satisfies OperationDoc;

const SCRIPT_OPERATION = {
  operationId: 'array_config_js_retrieve',
  summary: "The project's remote config as a script, with its site apps",
  description:
    'Assigns `window._POSTHOG_REMOTE_CONFIG[token]` (the JSON remote config) and holds the site apps ' +
    'inline; posthog-js loads it first and falls back to the JSON. Answers `If-None-Match` with 304.',
  tags: ['remote-config'],
  params: TOKEN_PARAMS,
  headers: IF_NONE_MATCH,
  response: {
    200: javascript('The script.', CACHING_HEADERS),
    304: NOT_MODIFIED,
    404: SCRIPT_NOT_FOUND,
    503: SCRIPT_UNAVAILABLE,
  },
} satisfies OperationDoc;

/** `/array/:token/config` and `config.js`; an unknown token is 404, as posthog/api/remote_config.py. */
export function registerRemoteConfigRoutes(app: FastifyInstance, options: RemoteConfigRouteOptions): void {
  const { remoteConfig, tokens } = options;

  const entryFor = async (token: string) => {
    const teamId = await tokens.resolve(token);
    return teamId === null ? null : remoteConfig.forTeam(teamId);
  };
  const unavailable = (failure: unknown): void => {
    if (!(
      failure instanceof RemoteConfigUnavailableError || failure instanceof TokenLookupUnavailableError
    )) {
      throw failure;
    }
  };

  documentedRoute(app, {
    method: 'GET',
    url: '/array/:token/config',
    doc: CONFIG_OPERATION,
    browser: true,
    handler: async (request, reply) => {
      try {
        const entry = await entryFor(request.params.token);
        if (!entry) return await reply.code(404).send(UNKNOWN_TOKEN);
        const { body, etag } = entry.json;
        void reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
        if (matchesEtag(request.headers['if-none-match'], etag)) return await reply.code(304).send();
        return await reply.type('application/json; charset=utf-8').code(200).send(body);
      } catch (failure) {
        unavailable(failure);
        // At debug: the caches log the outage once.
        reply.log.debug({ err: failure }, 'remote config unavailable');
        return reply.header('Cache-Control', 'no-store').code(503).send(SERVICE_UNAVAILABLE);
      }
    },
  });
  documentedRoute(app, {
    method: 'GET',
    url: '/array/:token/config.js',
    doc: SCRIPT_OPERATION,
    browser: true,
    handler: async (request, reply) => {
      void reply.type('application/javascript');
      try {
        const entry = await entryFor(request.params.token);
        if (!entry) return await reply.code(404).send('/* No project has this token. */');
        const { body, etag } = entry.script;
        void reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
        if (matchesEtag(request.headers['if-none-match'], etag)) return await reply.code(304).send();
        return await reply.code(200).send(body);
      } catch (failure) {
        unavailable(failure);
        reply.log.debug({ err: failure }, 'remote config unavailable');
        return reply
          .header('Cache-Control', 'no-store')
          .code(503)
          .send('/* Transient error, please retry. */');
      }
    },
  });
  documentedRoute(app, {
    method: 'OPTIONS',
    url: '/array/:token/config',
    doc: {
      ...preflightOperation('/array/{token}/config', Type.Object({}, { description: 'An empty object.' })),
      operationId: 'array_config_preflight',
      params: TOKEN_PARAMS,
    },
    browser: true,
    handler: async (_request, reply) => reply.code(200).send({}),
  });
}
