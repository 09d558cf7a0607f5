import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { MethodNotAllowedException } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { ClickHouseConnectionConfig } from '@hogbase/clickhouse';
import { redactHeaders, redactQuery, redactUrl, type ManagementConfig } from '@hogbase/config';
import { MetricsService } from './health/metrics.service';
import { PinoNestLogger } from './logging/pino-nest-logger.service';
import { ManagementModule } from './management.module';
import { RouteMatcher } from './routes/route-matcher.service';
import { documentProjectScopedPaths } from './routes/project-scoped-paths.util';
import { assertEveryRouteDeclaresAccess, routeTable } from './routes/route-table.util';
import { completeOpenApiDocument } from './schema/openapi-completion.util';
import { OpenApiDocument, OPENAPI_DOCUMENT_OPTIONS } from './schema/openapi-document.service';
import { UnsupportedMediaTypeError } from './common/validation.pipe';
import { refuseDeepBodies, securityHeaders } from './common/request-hardening.middleware';
import { publicOriginMiddleware } from './common/public-url.util';
import { MULTIPART_FORM_ROUTES } from './plugins/plugin-config.controller';

const PROBE_PATHS = new Set(['/_health', '/_ready', '/metrics']);

/** The routes whose interceptor parses a multipart form (after the access guard): the rest refuse one. */
const multipartForms = new RouteMatcher();
multipartForms.load(
  MULTIPART_FORM_ROUTES.map((route) => ({ ...route, handler: 'multipart form', rule: undefined })),
);

/** A write with a body that is not JSON is a 415, as DRF answers, rather than an empty body. */
function refuseUnsupportedBodies(
  request: express.Request,
  _response: express.Response,
  next: express.NextFunction,
) {
  const contentType = request.headers['content-type'];
  if (request.is('multipart/form-data') && multipartForms.methodsFor(request.path).includes(request.method)) {
    next();
    return;
  }
  const hasBody =
    Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  if (
    hasBody &&
    contentType &&
    request.body === undefined &&
    !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(request.method)
  ) {
    next(new UnsupportedMediaTypeError(contentType.split(';')[0].trim()));
    return;
  }
  next();
}

export interface ManagementAppOptions {
  config: ManagementConfig;
  databaseUrl: string;
  /** The events store the event listing reads (opened on first use); without it the listing answers 503. */
  clickhouse?: ClickHouseConnectionConfig;
  logger: Logger;
}

/** Builds the management app (not yet listening): middleware, OpenAPI document, then Nest init. */
export async function createManagementApp({ config, databaseUrl, clickhouse, logger }: ManagementAppOptions) {
  const app = await NestFactory.create<NestExpressApplication>(
    ManagementModule.forRoot({ config, databaseUrl, clickhouse }),
    {
      logger: new PinoNestLogger(logger.child({ app: 'management' })),
      bodyParser: false,
      abortOnError: false,
    },
  );
  assertEveryRouteDeclaresAccess(app);
  app.get(RouteMatcher).load(routeTable(app));
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  app.use(securityHeaders);
  app.use(publicOriginMiddleware(config));
  app.use(
    pinoHttp({
      logger: logger.child({ app: 'management' }),
      genReqId: (request, response) => {
        const id = (request.headers['x-request-id'] as string | undefined) ?? randomUUID();
        response.setHeader('X-Request-Id', id);
        return id;
      },
      // Never log credentials, wherever a client put them (headers, query string, path).
      serializers: {
        req: (request: { url?: string; query?: unknown; headers?: Record<string, unknown> }) => ({
          ...request,
          url: request.url === undefined ? undefined : redactUrl(request.url),
          query: redactQuery(request.query),
          headers: redactHeaders(request.headers),
        }),
        res: (response: { headers?: Record<string, unknown> }) => ({
          ...response,
          headers: redactHeaders(response.headers),
        }),
      },
      // Probes and scrapes come every few seconds: a line each would drown the log.
      autoLogging: { ignore: (request) => PROBE_PATHS.has(request.url ?? '') },
      // A 5xx's cause is logged by the error filter (a Postgres outage once, not per request):
      // pino-http's stand-in error ("failed with status code") would add a stack to each line.
      customErrorObject: (_request, _response, _error, line: Record<string, unknown>) => ({
        ...line,
        err: undefined,
      }),
    }),
  );
  const metrics = app.get(MetricsService);
  app.use((request: express.Request, response: express.Response, next: express.NextFunction) => {
    const stop = metrics.httpDuration.startTimer({ method: request.method });
    response.on('finish', () => {
      const route = (request.route as { path?: string } | undefined)?.path ?? 'unmatched';
      stop({ route: `${request.baseUrl}${route}`, status: String(response.statusCode) });
    });
    next();
  });
  // A path is the resource of its most specific route (DRF's URL resolution): a method that route
  // does not serve is a 405 there, never a call of the `:id` route beside it with the action's name.
  const routes = app.get(RouteMatcher);
  app.use((request: express.Request, _response: express.Response, next: express.NextFunction) => {
    next(routes.allows(request.path, request.method) ? undefined : new MethodNotAllowedException());
  });
  // Not strict: a JSON string or number is parsed, then refused by the validation pipe with DRF's message.
  app.use(express.json({ limit: '2mb', strict: false, type: ['application/json', 'application/*+json'] }));
  app.use(refuseUnsupportedBodies);
  app.use(refuseDeepBodies);

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('hogbase management API')
      .setDescription(
        'PostHog-compatible management API. Authenticate with `Authorization: Bearer <personal API key>`; ' +
          'each operation lists the key scope it needs under `security`, and its full access rule under `x-access`.',
      )
      .setVersion('1')
      .addSecurity('PersonalAPIKey', {
        type: 'http',
        scheme: 'bearer',
        description: 'personal API key phx_…',
      })
      .build(),
    OPENAPI_DOCUMENT_OPTIONS,
  );
  documentProjectScopedPaths(document);
  app.get(OpenApiDocument).document = completeOpenApiDocument(document);
  await app.init();
  return app;
}
