/**
 * The `{type, code, detail, attr}` body every capture-host endpoint answers an error with, as
 * PostHog does (ARCHITECTURE.md, cross-cutting rules); `attr` names the offending field, if any.
 */
export interface ErrorBody {
  type: string;
  code: string;
  detail: string;
  attr: string | null;
}

export function errorBody(type: string, code: string, detail: string, attr: string | null = null): ErrorBody {
  return { type, code, detail, attr };
}

/** A 503's body: something the answer depends on (Postgres, the queue) is down; SDKs retry. */
export const SERVICE_UNAVAILABLE: Readonly<ErrorBody> = Object.freeze(
  errorBody('server_error', 'service_unavailable', 'Transient error, please retry.'),
);

/**
 * What every 503 asks a client to wait before trying again, in seconds (`Retry-After`), as the
 * management API answers its own (libs/management-api/src/common/api-error.ts).
 */
export const RETRY_AFTER_SECONDS = 5;
