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
import { CaptureMetrics } from './capture-metrics.util';
import { registerCaptureEventRoutes } from './capture-events.controller';
import { registerBrowserCors } from './cors.middleware';
import { errorBody, RETRY_AFTER_SECONDS, SERVICE_UNAVAILABLE } from './error-body.dto';
import { registerFlagRoutes, type FlagServices } from './flags/flags.controller';
import { registerCaptureOpenApi, watchDocumentedPaths } from './openapi/capture-openapi.controller';
import { registerProbeRoutes } from './probes.controller';
import type { ProjectTokens } from './project-token.cache';
import { registerRecordingsRoutes } from './recordings.controller';
import type { RemoteConfigSource } from './remote-config/remote-config.cache';
import { registerRemoteConfigRoutes } from './remote-config/remote-config.controller';
import { registerSdkAssetRoutes } from './sdk-assets.controller';
import type { SiteAppSource } from './site-apps/site-apps.cache';
import { registerSiteAppRoutes } from './site-apps/site-apps.controller';

export interface CaptureAppOptions {
  publisher: EventPublisher;
  tokens: ProjectTokens;
  logger: Logger;
  batchBodyLimit: number;
  eventBodyLimit: number;
  maxDecodedBytes: number;
  trustProxy: boolean;
  /** What /_ready answers; a bare boolean is a readiness without checks. */
  ready: () => Promise<Readiness | boolean>;
  /**
   * Largest event, in bytes of its queue message: a request holding a larger one is refused whole
   * (413). Default DEFAULT_MAX_EVENT_BYTES, 1,000,000 as PostHog's rust/capture/src/config.rs.
   */
  maxEventBytes?: number;
  flags?: FlagServices;
  siteApps?: SiteAppSource;
  remoteConfig?: RemoteConfigSource;
  /** In a worker of a capture cluster: every worker's metrics, summed. */
  metricsText?: (own: Registry) => Promise<string>;
  /** METRICS_TOKEN: when set, `/metrics` needs `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

/** The capture host: the answers every route shares (errors, 404, draining, Retry-After, CORS), then the routes. */
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
    // Fastify's own closing answer and URL errors have bodies no SDK or document knows.
    return503OnClosing: false,
    frameworkErrors: (failure, _request, reply: FastifyReply) => {
      void reply.code(400).send(errorBody('invalid_request', 'invalid_url', failure.message));
    },
  });

  // SDKs send JSON, gzip, base64, form and text/plain: the decoder decides, not the content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  registerBrowserCors(app);
  // Draining: a new request is a 503 like any other (SDKs retry it elsewhere); those in flight finish.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (closing) return reply.header('connection', 'close').code(503).send(SERVICE_UNAVAILABLE);
  });
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
