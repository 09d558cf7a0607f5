import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { CaptureError, decodePayload, type QueryParams } from '@hogbase/capture-core';
import {
  buildLocalEvaluationPayload,
  type CompiledFlags,
  evaluateFlags,
  type FlagEvaluationResult,
} from '@hogbase/flag-evaluation';
import { FlagStore, type TeamFlags } from '@hogbase/flag-store';
import { preflightOperation } from '../capture.dto';
import { matchesEtag } from '../etag.util';
import { errorBody, SERVICE_UNAVAILABLE } from '../error-body.dto';
import {
  documentedRoute,
  type DocumentedReply,
  type DocumentedRequest,
} from '../openapi/documented-route.util';
import {
  FlagDefinitionsUnavailableError,
  FlagRequestError,
  RemoteConfigUnavailableError,
  TokenLookupUnavailableError,
} from '../capture.errors';
import type { ProjectTokens } from '../project-token.cache';
import { STATIC_FLAGS_CONFIG_FIELDS } from '../remote-config/remote-config.presenter';
import type { FlagsConfigFields } from '../remote-config/remote-config.dto';
import type { RemoteConfigSource } from '../remote-config/remote-config.cache';
import { FlagDefinitionsCache } from './flag-definitions.cache';
import { parseFlagRequest, type FlagRequest } from './flag-request.validator';
import { legacyBody, v2Body, v2Json } from './flag-response.util';
import { definitionsOperation, FLAGS_PREFLIGHT_BODY, remoteFlagsOperation } from './flags.dto';
import { PersonalKeyAuthorizer, SECRET_KEY_PREFIX } from './personal-key.guard';

export interface FlagServices {
  store: FlagStore;
  definitions: FlagDefinitionsCache;
  keys: PersonalKeyAuthorizer;
}

interface RouteOptions {
  tokens: ProjectTokens;
  flags: FlagServices;
  /** Without it, only what holds for every project. */
  remoteConfig?: RemoteConfigSource;
  logger: Logger;
  maxDecodedBytes: number;
  bodyLimit: number;
}

type ResponseShape = 'v2' | 'legacy';

/** Fastify's own: a string body sent with it is not serialized again. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const INVALID_TOKEN = errorBody(
  'authentication_error',
  'invalid_api_key',
  'Project API key invalid. You can find your project API key in your project settings.',
);

const UNKNOWN_KEY = errorBody(
  'authentication_error',
  'authentication_failed',
  'Personal API key found in request Authorization header is invalid.',
);

function first(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

/** Where posthog-rs sends the project API key when it asks for definitions. */
const PROJECT_KEY_HEADER = 'x-posthog-project-api-key';

/**
 * `?token=`, then `?api_key=` (as `get_token` in posthog/utils.py on a GET), then the header. NOTE:
 * the query decides when they differ; the key in `Authorization` must reach the project either way.
 */
function definitionsToken(request: DefinitionsRequest): string | undefined {
  const query = request.query as QueryParams;
  const candidates = [first(query.token), first(query.api_key), first(request.headers[PROJECT_KEY_HEADER])];
  return candidates.map((value) => value?.trim()).find((value) => !!value);
}

type RemoteFlagsOperation = ReturnType<typeof remoteFlagsOperation>;
type DefinitionsOperation = ReturnType<typeof definitionsOperation>;
type DefinitionsRequest = DocumentedRequest<DefinitionsOperation>;

/** Remote evaluation (`/flags`, `/decide`) and the local-evaluation definitions. */
export function registerFlagRoutes(app: FastifyInstance, options: RouteOptions): void {
  const { flags, tokens, logger } = options;

  /** A Postgres outage leaves the project's settings out rather than failing the flags. */
  async function withRemoteConfig<T extends object>(teamId: number, body: T) {
    let fields: FlagsConfigFields = STATIC_FLAGS_CONFIG_FIELDS;
    if (options.remoteConfig) {
      try {
        fields = (await options.remoteConfig.forTeam(teamId))?.flagsFields ?? fields;
      } catch (failure) {
        if (!(failure instanceof RemoteConfigUnavailableError)) throw failure;
      }
    }
    return { ...fields, ...body };
  }

  /** A Postgres failure degrades to what is cached plus the request's properties. */
  async function evaluate(
    request: FlagRequest,
    team: TeamFlags,
    compiled: CompiledFlags,
  ): Promise<{ results: Record<string, FlagEvaluationResult>; errors: boolean }> {
    let errors = false;
    if (request.anonDistinctId && request.anonDistinctId !== request.distinctId) {
      await flags.store
        .recordHashKeyOverrides(team, request.distinctId, request.anonDistinctId)
        .catch((failure: unknown) => {
          errors = true;
          logger.warn({ err: failure }, 'hash key overrides not recorded');
        });
    }
    let context;
    try {
      context = await flags.store.contextFor(team, request);
    } catch (failure) {
      errors = true;
      logger.warn({ err: failure }, 'flag context not read: evaluating with the request properties only');
      context = {
        distinctId: request.distinctId,
        personProperties: request.personProperties ?? {},
        groups: request.groups,
        groupProperties: request.groupProperties,
        groupTypeMapping: team.groupTypeMapping,
        cohorts: Object.fromEntries(team.cohorts.map((cohort) => [String(cohort.id), cohort])),
        anonDistinctId: request.anonDistinctId,
        deviceId: request.deviceId,
        timezone: team.timezone,
      };
    }
    return { results: evaluateFlags(compiled, context, { flagKeys: request.flagKeys }), errors };
  }

  const remote =
    (shapeOf: (query: QueryParams) => ResponseShape, withConfig: (query: QueryParams) => boolean) =>
    async (
      request: DocumentedRequest<RemoteFlagsOperation>,
      reply: DocumentedReply<RemoteFlagsOperation>,
    ) => {
      const query = request.query as QueryParams;
      try {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const flagRequest = parseFlagRequest(
          decodePayload(
            {
              body,
              contentType: request.headers['content-type'],
              contentEncoding: request.headers['content-encoding'],
              query,
            },
            { maxDecodedBytes: options.maxDecodedBytes },
          ),
        );
        const teamId = await tokens.resolve(flagRequest.token);
        if (teamId === null) return await reply.code(401).send(INVALID_TOKEN);
        let team: TeamFlags;
        let compiled: CompiledFlags;
        let stale = false;
        try {
          ({ flags: team, compiled, stale } = await flags.definitions.get(teamId));
        } catch (failure) {
          if (!(failure instanceof FlagDefinitionsUnavailableError)) throw failure;
          logger.warn({ err: failure }, 'flag definitions unavailable');
          const empty = shapeOf(query) === 'v2' ? v2Body({}, true) : legacyBody({}, true);
          return await reply
            .code(200)
            .send(withConfig(query) ? await withRemoteConfig(teamId, empty) : empty);
        }
        const { results, errors } = await evaluate(flagRequest, team, compiled);
        if (shapeOf(query) === 'v2' && !withConfig(query)) {
          // What server-side SDKs ask on every call: built as text.
          return await reply
            .type(JSON_CONTENT_TYPE)
            .code(200)
            .send(v2Json(results, errors || stale));
        }
        const shaped =
          shapeOf(query) === 'v2' ? v2Body(results, errors || stale) : legacyBody(results, errors || stale);
        return await reply
          .code(200)
          .send(withConfig(query) ? await withRemoteConfig(teamId, shaped) : shaped);
      } catch (failure) {
        if (failure instanceof FlagRequestError) {
          const type = failure.status === 401 ? 'authentication_error' : 'validation_error';
          return reply.code(failure.status).send(errorBody(type, failure.code, failure.message));
        }
        if (failure instanceof CaptureError) return reply.code(failure.status).send(failure.toBody());
        if (failure instanceof TokenLookupUnavailableError) {
          return reply.code(503).send(SERVICE_UNAVAILABLE);
        }
        throw failure;
      }
    };

  const version = (query: QueryParams) => Number(first(query.v) ?? '1');
  const flagsHandler = remote(
    (query) => (version(query) >= 2 ? 'v2' : 'legacy'),
    (query) => first(query.config) === 'true',
  );
  const decideHandler = remote(
    (query) => (version(query) >= 4 ? 'v2' : 'legacy'),
    () => true,
  );
  for (const [path, handler] of [
    ['flags', flagsHandler],
    ['decide', decideHandler],
  ] as const) {
    for (const method of ['GET', 'POST'] as const) {
      documentedRoute(app, {
        method,
        url: `/${path}/`,
        doc: remoteFlagsOperation(path, method),
        browser: true,
        bodyLimit: options.bodyLimit,
        handler,
      });
    }
    documentedRoute(app, {
      method: 'OPTIONS',
      url: `/${path}/`,
      doc: preflightOperation(`/${path}/`, FLAGS_PREFLIGHT_BODY),
      browser: true,
      handler: async (_request, reply) => reply.code(200).send({}),
    });
  }

  const definitions = async (request: DefinitionsRequest, reply: DocumentedReply<DefinitionsOperation>) => {
    const query = request.query as QueryParams;
    const authorization = request.headers.authorization ?? '';
    const presented = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    if (!presented) {
      return reply
        .header('WWW-Authenticate', 'Bearer')
        .code(401)
        .send(
          errorBody(
            'authentication_error',
            'not_authenticated',
            'Authentication credentials were not provided.',
          ),
        );
    }
    const token = definitionsToken(request);
    const secretKey = presented.startsWith(SECRET_KEY_PREFIX);
    if (!token && !secretKey) {
      return reply
        .code(400)
        .send(
          errorBody(
            'validation_error',
            'required',
            'The project API key is required: the token query parameter or the X-PostHog-Project-Api-Key header.',
            'token',
          ),
        );
    }
    try {
      // A project secret key names its project: it needs no project API key.
      const teamId = token
        ? await tokens.resolve(token)
        : await flags.keys.secretKeyTeam(presented).catch((failure: unknown) => {
            throw new FlagDefinitionsUnavailableError(failure);
          });
      if (teamId === null) return await reply.code(401).send(token ? INVALID_TOKEN : UNKNOWN_KEY);
      const check = await flags.keys.check(presented, teamId).catch((failure: unknown) => {
        throw new FlagDefinitionsUnavailableError(failure);
      });
      if (check === 'unknown_key') return await reply.code(401).send(UNKNOWN_KEY);
      if (check === 'missing_scope') {
        return await reply
          .code(403)
          .send(
            errorBody(
              'authentication_error',
              'permission_denied',
              "API key missing required scope 'feature_flag:read'",
            ),
          );
      }
      if (check === 'no_access') {
        return await reply
          .code(403)
          .send(
            errorBody('authentication_error', 'permission_denied', 'You do not have access to this project.'),
          );
      }
      const sendCohorts = query.send_cohorts !== undefined;
      const { flags: team, version: digest } = await flags.definitions.get(teamId);
      const etag = `"${digest}${sendCohorts ? '-c' : ''}"`;
      void reply.header('ETag', etag).header('Cache-Control', 'private, must-revalidate');
      if (matchesEtag(request.headers['if-none-match'], etag)) return await reply.code(304).send();
      return await reply.code(200).send(
        buildLocalEvaluationPayload({
          flags: team.flags,
          groupTypeMapping: team.groupTypeMapping,
          cohorts: sendCohorts ? team.cohorts : [],
        }),
      );
    } catch (failure) {
      if (
        failure instanceof TokenLookupUnavailableError ||
        failure instanceof FlagDefinitionsUnavailableError
      ) {
        return reply.code(503).send(SERVICE_UNAVAILABLE);
      }
      throw failure;
    }
  };
  for (const path of ['/flags/definitions', '/api/feature_flag/local_evaluation'] as const) {
    documentedRoute(app, { method: 'GET', url: path, doc: definitionsOperation(path), handler: definitions });
  }
}
