import { createHash } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import {
  CaptureAcceptedSchema,
  CaptureBatchEventSchema,
  CaptureBatchSchema,
  CaptureEventSchema,
  EncodedPayloadFormSchema,
} from '../capture.dto';
import { errorBody, ErrorBodySchema } from '../error-body.dto';
import { matchesEtag } from '../etag.util';
import {
  FlagDetailSchema,
  FlagsLegacySchema,
  FlagsRequestSchema,
  FlagsV2Schema,
  LocalEvaluationFlagSchema,
  LocalEvaluationSchema,
} from '../flags/flags.dto';
import { HealthSchema, NotReadySchema, ReadySchema } from '../probes.dto';
import { RecordingsRefusedSchema } from '../recordings.controller';
import { RemoteConfigSchema, SiteAppLinkSchema } from '../remote-config/remote-config.dto';
import {
  documentedRoute,
  jsonText,
  jsonWithHeaders,
  noContent,
  ref,
  type JsonText,
} from './documented-route.util';

export const CAPTURE_OPENAPI_PATH = '/api/schema/';

const OpenApiDocumentSchema = Type.Object(
  {
    openapi: Type.String(),
    info: Type.Object({ title: Type.String(), version: Type.String() }),
    paths: Type.Record(Type.String(), Type.Unknown()),
    components: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'OpenApiDocument', description: 'An OpenAPI 3.0 document.' },
);

type OpenApiDocument = Static<typeof OpenApiDocumentSchema>;

/** `#/components/schemas/<$id>`: every schema an operation refers to. */
export const CAPTURE_API_COMPONENTS = [
  ErrorBodySchema,
  CaptureEventSchema,
  CaptureBatchEventSchema,
  CaptureBatchSchema,
  EncodedPayloadFormSchema,
  CaptureAcceptedSchema,
  RecordingsRefusedSchema,
  FlagsRequestSchema,
  FlagDetailSchema,
  FlagsV2Schema,
  FlagsLegacySchema,
  LocalEvaluationFlagSchema,
  LocalEvaluationSchema,
  RemoteConfigSchema,
  SiteAppLinkSchema,
  HealthSchema,
  ReadySchema,
  NotReadySchema,
  OpenApiDocumentSchema,
] as const;

const DESCRIPTION = [
  'The capture host of a PostHog-compatible backend: what SDKs call. Events (`/capture/`, `/batch/` and ',
  "the SDKs' own paths), flags (`/flags/`, `/decide/`, the local-evaluation definitions), the remote config ",
  'and site apps, posthog-js scripts, and probes.\n\n',
  'Events and flags authenticate by the project API key (`phc_…`) in the body; the local-evaluation ',
  'definitions by a personal API key or the project secret key in `Authorization`.\n\n',
  'Every error answers `{type, code, detail, attr}` (`CaptureError`). A method a path does not list is ',
  'answered 405 with `Allow` and that body; a path not listed, 404 with that body. A trailing slash is ',
  'optional on every path.',
].join('');

const SCHEMA_OPERATION = {
  operationId: 'schema_retrieve',
  summary: 'This document',
  tags: ['schema'],
  headers: Type.Object({
    'if-none-match': Type.Optional(Type.String({ description: 'The ETag of an earlier answer.' })),
  }),
  response: {
    200: jsonWithHeaders('The OpenAPI document of the capture host.', ref(OpenApiDocumentSchema), {
      etag: Type.String(),
      'cache-control': Type.String({ description: '`public, max-age=300`' }),
    }),
    304: noContent('Unchanged since the ETag sent in `If-None-Match`.'),
  },
};

/** Built by @fastify/swagger from each route's `config.openapi`. Call before any route is added. */
export function registerCaptureOpenApi(app: FastifyInstance): void {
  for (const component of CAPTURE_API_COMPONENTS) app.addSchema(component);
  void app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'hogbase capture API', version: '1', description: DESCRIPTION },
      components: {
        securitySchemes: {
          PersonalAPIKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'A personal API key (`phx_…`) with the scope `feature_flag:read`.',
          },
          ProjectSecretAPIKey: {
            type: 'http',
            scheme: 'bearer',
            description: "The project's secret API key (`phs_…`).",
          },
          MetricsToken: { type: 'http', scheme: 'bearer', description: '`METRICS_TOKEN`, when set.' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) =>
        typeof json.$id === 'string' ? json.$id : `def-${index}`,
    },
    transform: ({ route, url }) => ({ schema: route.config?.openapi ?? { hide: true }, url }),
  });

  let served: { body: JsonText<OpenApiDocument>; etag: string } | undefined;
  void app.register((scope, _options, registered) => {
    documentedRoute(scope, {
      method: 'GET',
      url: CAPTURE_OPENAPI_PATH,
      doc: SCHEMA_OPERATION,
      handler: async (request, reply) => {
        if (!served) {
          const body = jsonText(scope.swagger() as OpenApiDocument);
          served = { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
        }
        void reply.header('ETag', served.etag).header('Cache-Control', 'public, max-age=300');
        if (matchesEtag(request.headers['if-none-match'], served.etag)) return reply.code(304).send();
        return reply.type('application/json; charset=utf-8').code(200).send(served.body);
      },
    });
    registered();
  });
}

/**
 * `refuseOtherMethods`, called once every route is added, answers the other methods of documented
 * paths 405 with `Allow`, as clients (and Schemathesis's `unsupported_method` check) expect.
 */
export function watchDocumentedPaths(app: FastifyInstance): { refuseOtherMethods(): void } {
  const paths = new Map<string, { methods: HTTPMethods[]; browser: boolean }>();
  app.addHook('onRoute', (route) => {
    // Fastify's HEAD beside each GET carries the GET's config.
    if (!route.config?.openapi || route.method === 'HEAD') return;
    const entry = paths.get(route.url) ?? { methods: [], browser: false };
    entry.methods.push(...(Array.isArray(route.method) ? route.method : [route.method]));
    entry.browser ||= route.config.browser === true;
    paths.set(route.url, entry);
  });
  return {
    refuseOtherMethods() {
      void app.register((scope, _options, registered) => {
        for (const [url, { methods, browser }] of paths) {
          const allow = methods.filter((method) => method !== 'OPTIONS').join(', ');
          const taken = new Set<string>([...methods, ...(methods.includes('GET') ? ['HEAD'] : [])]);
          const refuse = async (request: FastifyRequest, reply: FastifyReply) =>
            reply
              .code(405)
              .header('allow', allow)
              .send(
                errorBody('invalid_request', 'method_not_allowed', `Method "${request.method}" not allowed.`),
              );
          scope.route({
            method: scope.supportedMethods.filter((method) => !taken.has(method)),
            url,
            config: { refusesMethod: true, ...(browser ? { browser: true } : {}) },
            // Before the body is read: a QUERY without a Content-Type would be a 400.
            onRequest: refuse,
            handler: refuse,
          });
        }
        registered();
      });
    },
  };
}
