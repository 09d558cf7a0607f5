import { Type, type Static } from '@sinclair/typebox';
import { stringEnum } from './openapi/documented-route.util';

/**
 * The `{type, code, detail, attr}` body every capture-host endpoint answers an error with, as
 * PostHog does (ARCHITECTURE.md, cross-cutting rules); `attr` names the offending field, if any.
 * The capture host's document names it `CaptureError`.
 */
export const ErrorBodySchema = Type.Object(
  {
    type: stringEnum(['validation_error', 'authentication_error', 'invalid_request', 'server_error']),
    code: Type.String({
      description:
        'Why, for programs: e.g. `invalid_payload`, `no_data`, `missing_api_key`, `invalid_api_key`, ' +
        '`payload_too_large`, `event_too_large`, `method_not_allowed`, `not_found`, `service_unavailable`.',
    }),
    detail: Type.String({ description: 'Why, for people.' }),
    attr: Type.Union([Type.String(), Type.Null()], { description: 'The offending field, if one is.' }),
  },
  { $id: 'CaptureError', description: 'An error answer of the capture host.' },
);

export type ErrorBody = Static<typeof ErrorBodySchema>;

export function errorBody(
  type: ErrorBody['type'],
  code: string,
  detail: string,
  attr: string | null = null,
): ErrorBody {
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
