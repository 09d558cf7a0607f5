import { createHash, timingSafeEqual } from 'node:crypto';

/** What a refused `/metrics` request gets: 401, this body and `WWW-Authenticate: Bearer`. */
export interface MetricsRefusal {
  status: 401;
  body: {
    type: 'authentication_error';
    code: 'not_authenticated' | 'authentication_failed';
    detail: string;
    attr: null;
  };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Null when the request may read `/metrics`: METRICS_TOKEN unset (a Prometheus on a private network) or
 * sent as `Bearer`. Both sides are hashed before the constant-time compare: no time or length leaks.
 */
export function refuseMetricsRequest(
  authorization: string | readonly string[] | undefined,
  token: string | undefined,
): MetricsRefusal | null {
  if (token === undefined) return null;
  const header = typeof authorization === 'string' ? authorization : authorization?.[0];
  const presented = BEARER.exec(header ?? '')?.[1];
  if (presented === undefined) {
    return refusal('not_authenticated', 'Authentication credentials were not provided.');
  }
  return timingSafeEqual(digest(presented), digest(token))
    ? null
    : refusal('authentication_failed', 'The metrics token is not valid.');
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function refusal(code: MetricsRefusal['body']['code'], detail: string): MetricsRefusal {
  return { status: 401, body: { type: 'authentication_error', code, detail, attr: null } };
}
