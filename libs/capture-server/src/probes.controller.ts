import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { readinessResponse, refuseMetricsRequest, type Readiness } from '@hogbase/service-runtime';
import { documentedRoute } from './openapi/documented-route.util';
import { HEALTH_OPERATION, METRICS_OPERATION, READY_OPERATION } from './probes.dto';

export interface ProbeOptions {
  /** A bare boolean is a readiness without checks. */
  ready: () => Promise<Readiness | boolean>;
  registry: Registry;
  /** `registry`'s metrics unless given. */
  metricsText?: (own: Registry) => Promise<string>;
  metricsToken?: string;
}

/** `/_health`, `/_ready` and `/metrics` on the capture host, answered as @hogbase/service-runtime does. */
export function registerProbeRoutes(scope: FastifyInstance, options: ProbeOptions): void {
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
      if (refused) return reply.header('www-authenticate', 'Bearer').code(refused.status).send(refused.body);
      return reply
        .type('text/plain; version=0.0.4')
        .code(200)
        .send(await metricsText(options.registry));
    },
  });
}
