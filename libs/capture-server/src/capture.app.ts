import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { EventPublisher } from '@hogbase/queue';
import type { Readiness } from '@hogbase/service-runtime';
import { CaptureMetrics } from './capture-metrics';
import { registerCaptureEventRoutes } from './capture-events.controller';
import { registerBrowserCors } from './cors';
import { errorBody, RETRY_AFTER_SECONDS, SERVICE_UNAVAILABLE } from './error-body';
import { registerFlagRoutes, type FlagServices } from './flags/flags.routes';
import { registerCaptureOpenApi, watchDocumentedPaths } from './openapi/capture-openapi.plugin';
import { registerProbeRoutes } from './probes.controller';
import type { ProjectTokens } from './project-token.cache';
import { registerRecordingsRoutes } from './recordings.routes';
import type { RemoteConfigSource } from './remote-config/remote-config.cache';
import { registerRemoteConfigRoutes } from './remote-config/remote-config.routes';
import { registerSdkAssetRoutes } from './sdk-assets.routes';
import type { SiteAppSource } from './site-apps/site-apps.cache';
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
   * whole (413), in every run mode. Default DEFAULT_MAX_EVENT_BYTES (1,000,000, as PostHog's
   * rust/capture/src/config.rs).
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
 * The capture host: its Fastify instance, the answers every route shares (errors, 404, draining,
 * Retry-After, CORS, the OpenAPI document), then the routes: events, flags, recordings, site apps,
 * remote config and SDK assets, and the probes.
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

  void app.register((scope, _options, registered) => {
    registerCaptureEventRoutes(scope, {
      publisher: options.publisher,
      tokens: options.tokens,
      metrics,
      batchBodyLimit: options.batchBodyLimit,
      eventBodyLimit: options.eventBodyLimit,
      maxDecodedBytes: options.maxDecodedBytes,
      maxEventBytes: options.maxEventBytes,
    });

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

    registerProbeRoutes(scope, {
      ready: options.ready,
      registry: metrics.registry,
      metricsText: options.metricsText,
      metricsToken: options.metricsToken,
    });
    registered();
  });
  documented.refuseOtherMethods();

  return { app, metrics };
}
