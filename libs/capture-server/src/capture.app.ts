import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  CaptureError,
  decodePayload,
  normalizeBatch,
  parseBatch,
  toQueueMessages,
  type QueryParams,
} from '@hogbase/capture-core';
import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { MessageTooLargeError, QueueUnavailableError, type EventPublisher } from '@hogbase/queue';
import { readinessResponse, refuseMetricsRequest, type Readiness } from '@hogbase/service-runtime';
import { CaptureMetrics } from './capture-metrics';
import {
  CaptureAcceptedSchema,
  eventGetOperation,
  eventPostOperation,
  preflightOperation,
} from './capture.schema';
import { registerBrowserCors } from './cors';
import { registerFlagRoutes, type FlagServices } from './flags/flags.routes';
import { errorBody, RETRY_AFTER_SECONDS, SERVICE_UNAVAILABLE } from './error-body';
import { registerCaptureOpenApi, watchDocumentedPaths } from './openapi/capture-openapi.plugin';
import {
  documentedRoute,
  ref,
  type DocumentedReply,
  type DocumentedRequest,
} from './openapi/documented-route.util';
import { HEALTH_OPERATION, METRICS_OPERATION, READY_OPERATION } from './probes.schema';
import { TokenLookupUnavailableError, type ProjectTokens } from './project-token.cache';
import { registerRecordingsRoutes } from './recordings.routes';
import { registerSdkAssetRoutes } from './sdk-assets.routes';
import type { RemoteConfigSource } from './remote-config/remote-config.cache';
import { registerRemoteConfigRoutes } from './remote-config/remote-config.routes';
import type { SiteAppSource } from './site-apps/site-apps.cache';

export type { ProjectTokens } from './project-token.cache';
import { registerSiteAppRoutes } from './site-apps/site-apps.routes';

export interface CaptureAppOptions {
  publisher: EventPublisher;
  tokens: ProjectTokens;
  logger: Logger;
  batchBodyLimit: number;
  eventBodyLimit: number;
  maxDecodedBytes: number;
  trustProxy: boolean;
  /**
   * What /_ready answers (capture.service.ts: the queue takes events; Postgres is only reported).
   * A bare boolean is a readiness without checks.
   */
  ready: () => Promise<Readiness | boolean>;
  /**
   * Largest event, in bytes of its queue message: a request holding a larger one is refused
   * whole (413), in every run mode. Default DEFAULT_MAX_EVENT_BYTES (1,000,000, as PostHog).
   */
  maxEventBytes?: number;
  /** Flag evaluation for SDKs (`/flags`, `/decide`, local-evaluation definitions). */
  flags?: FlagServices;
  /** A project's site apps: the `/site_app/` scripts posthog-js loads when `config.js` failed. */
  siteApps?: SiteAppSource;
  /** The remote config SDKs load at start (`/array/:token/config(.js)`, `/flags?config=true`, `/decide`). */
  remoteConfig?: RemoteConfigSource;
  /**
   * What /metrics answers: this app's registry by default; in a worker of a capture cluster, the
   * metrics of every worker, summed (capture-cluster.ts).
   */
  metricsText?: (own: Registry) => Promise<string>;
  /** METRICS_TOKEN: when set, `/metrics` needs `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

/**
 * Every path real SDKs post events to (posthog-node: /batch/; posthog-js: /e/ and /i/v0/e/). The
 * SDKs' own paths also take a legacy `GET ?data=`; the spec's two public endpoints, `/capture/` and
 * `/batch/`, are POST-only (405 to any other method but a CORS preflight).
 */
const EVENT_PATHS: readonly CapturePath[] = [
  { url: '/e/', methods: ['GET', 'POST'], summary: 'Capture events (posthog-js)' },
  {
    url: '/i/v0/e/',
    methods: ['GET', 'POST'],
    summary: 'Capture events (posthog-js, after the remote config)',
  },
  { url: '/capture/', methods: ['POST'], summary: 'Capture one event' },
  { url: '/track/', methods: ['GET', 'POST'], summary: 'Capture events (legacy SDKs)' },
  { url: '/engage/', methods: ['GET', 'POST'], summary: 'Capture events (legacy SDKs)' },
];
const BATCH_PATHS: readonly CapturePath[] = [
  { url: '/batch/', methods: ['POST'], summary: 'Capture many events' },
];

interface CapturePath {
  url: string;
  methods: readonly ('GET' | 'POST')[];
  summary: string;
}

type EventOperation = ReturnType<typeof eventPostOperation> | ReturnType<typeof eventGetOperation>;

/**
 * The capture service: decodes what SDKs send, resolves the project token, and answers 200 only
 * once the queue acknowledged every accepted event (Kafka `acks: -1`, or the in-process bus once
 * written). Single events without a name or distinct id are dropped (counted), never the batch.
 */
export function buildCaptureApp(options: CaptureAppOptions): {
  app: FastifyInstance;
  metrics: CaptureMetrics;
} {
  const metrics = new CaptureMetrics();
  const logger: FastifyBaseLogger = options.logger.child({ app: 'capture' });
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: options.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: options.batchBodyLimit,
    // Refused while closing by the hook below, in the capture host's error body: Fastify's own
    // closing answer has a body of its own, which no SDK or document knows.
    return503OnClosing: false,
    // A URL that is not valid percent-encoding: the capture host's error body, not Fastify's.
    frameworkErrors: (failure, _request, reply: FastifyReply) => {
      void reply.code(400).send(errorBody('invalid_request', 'invalid_url', failure.message));
    },
  });

  // Bodies come in every encoding SDKs use (JSON, gzip, base64, form, text/plain): read them raw
  // and let the decoder decide.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  registerBrowserCors(app);
  // Draining (SIGTERM): a request that arrives now is a 503 like any other capture 503 (SDKs retry
  // it elsewhere), on a connection that closes; the requests already in flight finish.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) return reply.header('connection', 'close').code(503).send(SERVICE_UNAVAILABLE);
  });
  // Every 503 (the queue, or Postgres for a token never seen, is unavailable) says when to retry.
  app.addHook('onSend', async (_request, reply) => {
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after')) {
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    }
  });

  app.setErrorHandler((failure: Error & { statusCode?: number; code?: string }, _request, reply) => {
    if (failure.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || failure.statusCode === 413) {
      return reply
        .code(413)
        .send(errorBody('validation_error', 'payload_too_large', 'Request body is too large.'));
    }
    if (failure.statusCode && failure.statusCode >= 400 && failure.statusCode < 500) {
      return reply
        .code(failure.statusCode)
        .send(errorBody('validation_error', 'invalid_payload', failure.message));
    }
    options.logger.error({ err: failure }, 'capture request failed');
    return reply.code(500).send(errorBody('server_error', 'error', 'A server error occurred.'));
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send(errorBody('invalid_request', 'not_found', 'Endpoint not found.')),
  );

  // Routes are added from plugins, after the document's: its hook must see each one.
  const documented = watchDocumentedPaths(app);
  registerCaptureOpenApi(app);

  const handle =
    (bodyLimit: number) =>
    async (request: DocumentedRequest<EventOperation>, reply: DocumentedReply<EventOperation>) => {
      const stop = metrics.requests.startTimer();
      const status = await captureRequest(request, reply, bodyLimit);
      stop({ status: String(status) });
    };

  const captureRequest = async (
    request: DocumentedRequest<EventOperation>,
    reply: DocumentedReply<EventOperation>,
    bodyLimit: number,
  ): Promise<number> => {
    const query = request.query as QueryParams;
    try {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (body.length > bodyLimit) {
        void reply
          .code(413)
          .send(errorBody('validation_error', 'payload_too_large', 'Request body is too large.'));
        return 413;
      }
      const payload = decodePayload(
        {
          body,
          contentType: request.headers['content-type'],
          contentEncoding: request.headers['content-encoding'],
          query,
        },
        { maxDecodedBytes: options.maxDecodedBytes },
      );
      const batch = parseBatch(payload, query);
      const teamId = await options.tokens.resolve(batch.token);
      if (teamId === null) {
        void reply
          .code(401)
          .send(
            errorBody(
              'authentication_error',
              'invalid_api_key',
              'Project API key invalid. You can find your project API key in your project settings.',
            ),
          );
        return 401;
      }
      const { accepted, dropped } = normalizeBatch(batch, {
        teamId,
        ip: request.ip ?? null,
        now: new Date(),
        maxEventBytes: options.maxEventBytes,
      });
      // Before the drops are counted: an event too large refuses the whole request.
      const messages = toQueueMessages(accepted, options.maxEventBytes);
      for (const event of dropped) metrics.events.inc({ outcome: event.reason });
      if (dropped.length > 0) {
        request.log.info({ dropped: dropped.slice(0, 10), teamId }, 'events dropped');
      }
      if (messages.length > 0) {
        await options.publisher.publish(
          batch.historicalMigration ? HISTORICAL_EVENTS_TOPIC : EVENTS_TOPIC,
          messages,
        );
        metrics.events.inc({ outcome: 'accepted' }, accepted.length);
      }
      if (firstValue(query.beacon) === '1') {
        void reply.code(204).send();
        return 204;
      }
      void reply.code(200).send(ACCEPTED);
      return 200;
    } catch (failure) {
      if (failure instanceof CaptureError) {
        void reply.code(failure.status).send(failure.toBody());
        return failure.status;
      }
      if (failure instanceof QueueUnavailableError || failure instanceof TokenLookupUnavailableError) {
        // Per request at debug: the publisher and the token cache each log the outage once.
        request.log.debug({ err: failure }, 'capture unavailable');
        void reply.code(503).send(SERVICE_UNAVAILABLE);
        return 503;
      }
      if (failure instanceof MessageTooLargeError) {
        void reply.code(413).send(errorBody('validation_error', 'event_too_large', failure.message));
        return 413;
      }
      throw failure;
    }
  };

  void app.register((scope, _options, registered) => {
    for (const [paths, bodyLimit] of [
      [EVENT_PATHS, options.eventBodyLimit],
      [BATCH_PATHS, options.batchBodyLimit],
    ] as const) {
      for (const { url, methods, summary } of paths) {
        for (const method of methods) {
          documentedRoute(scope, {
            method,
            url,
            doc: method === 'GET' ? eventGetOperation(url, summary) : eventPostOperation(url, summary),
            browser: true,
            bodyLimit,
            handler: handle(bodyLimit),
          });
        }
        documentedRoute(scope, {
          method: 'OPTIONS',
          url,
          doc: preflightOperation(url, ref(CaptureAcceptedSchema, 'Always.')),
          browser: true,
          handler: async (_request, reply) => reply.code(200).send(ACCEPTED),
        });
      }
    }

    if (options.flags) {
      registerFlagRoutes(scope, {
        tokens: options.tokens,
        flags: options.flags,
        remoteConfig: options.remoteConfig,
        logger: options.logger,
        maxDecodedBytes: options.maxDecodedBytes,
        bodyLimit: options.eventBodyLimit,
      });
    }

    registerRecordingsRoutes(scope);
    if (options.siteApps) registerSiteAppRoutes(scope, { siteApps: options.siteApps });
    if (options.remoteConfig) {
      registerRemoteConfigRoutes(scope, { remoteConfig: options.remoteConfig, tokens: options.tokens });
      registerSdkAssetRoutes(scope, { remoteConfig: options.remoteConfig, tokens: options.tokens });
    }

    documentedRoute(scope, {
      method: 'GET',
      url: '/_health',
      doc: HEALTH_OPERATION,
      handler: async (_request, reply) => reply.code(200).send({ status: 'ok' }),
    });
    documentedRoute(scope, {
      method: 'GET',
      url: '/_ready',
      doc: READY_OPERATION,
      handler: async (_request, reply) => {
        const readiness = await options.ready().catch((failure: unknown): Readiness => ({
          ready: false,
          checks: { readiness: failure instanceof Error ? failure.message : String(failure) },
        }));
        const answer = readinessResponse(
          typeof readiness === 'boolean' ? { ready: readiness, checks: {} } : readiness,
        );
        void reply.header('cache-control', 'no-store');
        return answer.status === 200 ? reply.code(200).send(answer.body) : reply.code(503).send(answer.body);
      },
    });
    const metricsText = options.metricsText ?? ((own: Registry) => own.metrics());
    documentedRoute(scope, {
      method: 'GET',
      url: '/metrics',
      doc: METRICS_OPERATION,
      handler: async (request, reply) => {
        const refused = refuseMetricsRequest(request.headers.authorization, options.metricsToken);
        if (refused)
          return reply.header('www-authenticate', 'Bearer').code(refused.status).send(refused.body);
        return reply
          .type('text/plain; version=0.0.4')
          .code(200)
          .send(await metricsText(metrics.registry));
      },
    });
    registered();
  });
  documented.refuseOtherMethods();

  return { app, metrics };
}

const ACCEPTED = { status: 1 } as const;

function firstValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}
