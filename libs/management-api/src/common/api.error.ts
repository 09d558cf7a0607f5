import { HttpStatus } from '@nestjs/common';

/** PostHog's error codes (drf-exceptions-hog); the table is exhaustive so each has a status. */
export type ErrorCode =
  | 'not_authenticated'
  | 'authentication_failed'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'parse_error'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'required'
  | 'invalid_input'
  | 'invalid'
  | 'invalid_key'
  | 'invalid_date'
  | 'invalid_value'
  | 'cohort_does_not_exist'
  | 'behavioral_cohort_found'
  | 'null'
  | 'blank'
  | 'max_length'
  | 'min_length'
  | 'unique'
  | 'invalid_choice'
  | 'does_not_exist'
  | 'verification_required'
  | 'already_verified'
  | 'user_already_member'
  | 'throttled'
  | 'conflict'
  | 'service_unavailable'
  | 'error';

export type ErrorType =
  'validation_error' | 'authentication_error' | 'invalid_request' | 'throttled_error' | 'server_error';

export const ERROR_TABLE: Record<ErrorCode, { status: HttpStatus; type: ErrorType }> = {
  not_authenticated: { status: HttpStatus.UNAUTHORIZED, type: 'authentication_error' },
  authentication_failed: { status: HttpStatus.UNAUTHORIZED, type: 'authentication_error' },
  // PostHog reports permission failures with the authentication_error type.
  permission_denied: { status: HttpStatus.FORBIDDEN, type: 'authentication_error' },
  not_found: { status: HttpStatus.NOT_FOUND, type: 'invalid_request' },
  method_not_allowed: { status: HttpStatus.METHOD_NOT_ALLOWED, type: 'invalid_request' },
  parse_error: { status: HttpStatus.BAD_REQUEST, type: 'invalid_request' },
  unsupported_media_type: { status: HttpStatus.UNSUPPORTED_MEDIA_TYPE, type: 'invalid_request' },
  payload_too_large: { status: HttpStatus.PAYLOAD_TOO_LARGE, type: 'invalid_request' },
  required: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  invalid_input: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  // DRF's code for a ValidationError raised with a bare message (PostHog's "Invalid UUID").
  invalid: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  invalid_key: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  invalid_date: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  invalid_value: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  cohort_does_not_exist: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  behavioral_cohort_found: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  null: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  blank: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  max_length: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  min_length: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  unique: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  invalid_choice: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  does_not_exist: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  verification_required: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  already_verified: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  user_already_member: { status: HttpStatus.BAD_REQUEST, type: 'validation_error' },
  throttled: { status: HttpStatus.TOO_MANY_REQUESTS, type: 'throttled_error' },
  conflict: { status: HttpStatus.CONFLICT, type: 'invalid_request' },
  service_unavailable: { status: HttpStatus.SERVICE_UNAVAILABLE, type: 'server_error' },
  error: { status: HttpStatus.INTERNAL_SERVER_ERROR, type: 'server_error' },
};

export interface ErrorBody {
  type: ErrorType;
  code: ErrorCode;
  detail: string;
  attr: string | null;
}

export class ApiError extends Error {
  readonly status: HttpStatus;
  readonly type: ErrorType;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly attr: string | null = null,
  ) {
    super(detail);
    this.name = 'ApiError';
    ({ status: this.status, type: this.type } = ERROR_TABLE[code]);
  }

  get body(): ErrorBody {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr };
  }
}

/** The 503's `Retry-After`, in seconds; capture answers its 503s with the same value. */
export const RETRY_AFTER_SECONDS = 5;

/** Capture's 503 body. */
export const serviceUnavailable = () => new ApiError('service_unavailable', 'Transient error, please retry.');

export const notFound = (detail = 'Not found.') => new ApiError('not_found', detail);

export const permissionDenied = (detail = 'You do not have permission to perform this action.') =>
  new ApiError('permission_denied', detail);

export const insufficientLevel = () => permissionDenied('Your organization access level is insufficient.');

export const validationError = (
  detail: string,
  attr: string | null = null,
  code: ErrorCode = 'invalid_input',
) => new ApiError(code, detail, attr);
