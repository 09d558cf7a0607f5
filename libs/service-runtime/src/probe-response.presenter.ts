import type { ProbedService, Readiness } from './service.types';
import { failingChecks } from './readiness.util';

export interface ReadyBody {
  status: 'ok';
  checks: Readiness['checks'];
}

/** `/_ready` when not: the API's error body, with the checks. */
export interface NotReadyBody {
  type: 'server_error';
  code: 'service_unavailable';
  detail: string;
  attr: null;
  checks: Readiness['checks'];
}

/** The status and body `/_ready` answers for a readiness: 200, or 503 naming the failing checks. */
export function readinessResponse(
  readiness: Readiness,
): { status: 200; body: ReadyBody } | { status: 503; body: NotReadyBody } {
  if (readiness.ready) return { status: 200, body: { status: 'ok', checks: readiness.checks } };
  const failing = failingChecks(readiness);
  return {
    status: 503,
    body: {
      type: 'server_error',
      code: 'service_unavailable',
      detail: failing.length > 0 ? `Not ready: ${failing.join(', ')}.` : 'Not ready.',
      attr: null,
      checks: readiness.checks,
    },
  };
}

export interface ProbeResponse {
  status: number;
  contentType: string;
  body: string;
}

export const HEALTH_PATH = '/_health';
export const READY_PATH = '/_ready';
export const METRICS_PATH = '/metrics';

const JSON_TYPE = 'application/json; charset=utf-8';

/** `/_health`, `/_ready` and `/metrics` for any HTTP stack; undefined for another path; never a 500. */
export async function probeResponse(
  path: string,
  service: ProbedService,
): Promise<ProbeResponse | undefined> {
  switch (path) {
    case HEALTH_PATH:
      return { status: 200, contentType: JSON_TYPE, body: JSON.stringify({ status: 'ok' }) };
    case READY_PATH: {
      const readiness = await service.ready().catch((error: unknown): Readiness => ({
        ready: false,
        checks: { readiness: error instanceof Error ? error.message : String(error) },
      }));
      const { status, body } = readinessResponse(readiness);
      return { status, contentType: JSON_TYPE, body: JSON.stringify(body) };
    }
    case METRICS_PATH:
      return { status: 200, contentType: service.metrics.contentType, body: await service.metrics.metrics() };
    default:
      return undefined;
  }
}
