/**
 * Errors that reject a whole request, with codes from `posthog/api/capture.py` so clients parsing them
 * keep working; a bad single event is dropped with a reason instead.
 */
export type CaptureErrorType = 'validation_error' | 'authentication_error';

export interface CaptureErrorBody {
  type: CaptureErrorType;
  code: string;
  detail: string;
  attr: null;
}

export abstract class CaptureError extends Error {
  abstract readonly status: 400 | 401 | 413;
  abstract readonly type: CaptureErrorType;

  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): CaptureErrorBody {
    return { type: this.type, code: this.code, detail: this.message, attr: null };
  }
}

export class PayloadInvalidError extends CaptureError {
  readonly status = 400;
  readonly type = 'validation_error';

  constructor(message: string, code: 'invalid_payload' | 'no_data' = 'invalid_payload') {
    super(code, message);
  }
}

export class PayloadTooLargeError extends CaptureError {
  readonly status = 413;
  readonly type = 'validation_error';

  constructor(readonly limitBytes: number) {
    super('payload_too_large', `decompressed payload is larger than ${limitBytes} bytes`);
  }
}

/**
 * Refuses the whole batch, as EventTooBig in `rust/capture/src/sinks/kafka.rs`: posthog-node then
 * halves the batch until the event stands alone.
 */
export class EventTooLargeError extends CaptureError {
  readonly status = 413;
  readonly type = 'validation_error';

  constructor(readonly limitBytes: number) {
    super('event_too_large', `maximum event size exceeded: an event is larger than ${limitBytes} bytes`);
  }
}

export class NoTokenError extends CaptureError {
  readonly status = 401;
  readonly type = 'authentication_error';

  constructor() {
    super(
      'missing_api_key',
      'API key not provided. You can find your project API key in your project settings.',
    );
  }
}

export class MultipleTokensError extends CaptureError {
  readonly status = 401;
  readonly type = 'authentication_error';

  constructor() {
    super('invalid_api_key', 'batch submitted with inconsistent api_key values');
  }
}

export type InvalidTokenReason =
  'not_a_string' | 'empty' | 'too_long' | 'not_ascii' | 'null_byte' | 'personal_api_key';

export class InvalidTokenError extends CaptureError {
  readonly status = 401;
  readonly type = 'authentication_error';

  constructor(readonly reason: InvalidTokenReason) {
    super(
      'invalid_api_key',
      reason === 'personal_api_key'
        ? 'API key is not valid: a personal API key (phx_…) was sent; use the project API key (phc_…)'
        : `API key is not valid: ${reason}`,
    );
  }
}
