import { Type, type Static } from '@sinclair/typebox';
import { stringEnum } from './openapi/documented-route.util';

/** Every capture-host error, as PostHog answers them (posthog/exceptions.py). */
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

export const SERVICE_UNAVAILABLE: Readonly<ErrorBody> = Object.freeze(
  errorBody('server_error', 'service_unavailable', 'Transient error, please retry.'),
);

/** `Retry-After` of every 503, as the management API's (libs/management-api/src/common/api.error.ts). */
export const RETRY_AFTER_SECONDS = 5;
