import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEALTH_PATH, METRICS_PATH, probeResponse, READY_PATH } from './probe-response.presenter';
import { refuseMetricsRequest } from './metrics-access.util';
import { failingChecks } from './readiness.util';
import type { ProbedService, Readiness } from './service.types';

export interface ProbeLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface ProbeServerOptions {
  host: string;
  port: number;
  /** Told when readiness changes (ready → not ready and back), once per change, not per probe. */
  logger?: ProbeLogger;
  metricsToken?: string;
}

export interface ProbeServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

const PROBE_PATHS = new Set([HEALTH_PATH, READY_PATH, METRICS_PATH]);

const NOT_FOUND = JSON.stringify({
  type: 'invalid_request',
  code: 'not_found',
  detail: 'Endpoint not found.',
  attr: null,
});

/** Probes of a service with no HTTP app; plain node:http serving nothing else, so nothing slows a probe. */
export async function startProbeServer(
  service: ProbedService,
  options: ProbeServerOptions,
): Promise<ProbeServer> {
  let lastReady: boolean | undefined;
  const noteReadiness = (readiness: Readiness) => {
    if (readiness.ready === lastReady) return;
    // The first answer is news only when it is bad; every later change is.
    if (lastReady !== undefined || !readiness.ready) {
      if (readiness.ready) options.logger?.info({ checks: readiness.checks }, 'ready');
      else options.logger?.warn({ failing: failingChecks(readiness), checks: readiness.checks }, 'not ready');
    }
    lastReady = readiness.ready;
  };
  const probed: ProbedService = {
    metrics: service.metrics,
    ready: async () => {
      const readiness = await service.ready();
      noteReadiness(readiness);
      return readiness;
    },
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://probe').pathname.replace(/\/+$/, '') || '/';
    if (PROBE_PATHS.has(path) && request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    const refused =
      path === METRICS_PATH
        ? refuseMetricsRequest(request.headers.authorization, options.metricsToken)
        : null;
    if (refused) {
      response
        .writeHead(refused.status, {
          'content-type': 'application/json; charset=utf-8',
          'www-authenticate': 'Bearer',
        })
        .end(JSON.stringify(refused.body));
      return;
    }
    const answer = await probeResponse(path, probed);
    if (!answer) {
      response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(NOT_FOUND);
      return;
    }
    response.writeHead(answer.status, {
      'content-type': answer.contentType,
      'cache-control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : answer.body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.logger?.warn({ err: error, url: request.url }, 'probe failed');
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(
        new Error(`cannot serve probes on ${options.host}:${options.port}: ${error.message}`, {
          cause: error,
        }),
      );
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://${host}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Probers keep connections alive; nothing of theirs is worth waiting for.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
