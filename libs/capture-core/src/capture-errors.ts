/**
 * Errors that reject a whole capture request. Each carries the HTTP status and the
 * `{type, code, detail, attr}` body the capture app answers with (ARCHITECTURE.md, cross-cutting
 * rules); codes follow PostHog's legacy Django capture (`no_data`, `invalid_payload`,
 * `missing_api_key`, `invalid_api_key`) so that clients parsing them keep working.
 *
 * Anything about a single event (no name, no distinct id, ...) is NOT an error: that event is
 * dropped with a reason and the rest of its batch is ingested (see event-normalizer.ts).
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

/** The body cannot be decoded or parsed into events (400). */
export class PayloadInvalidError extends CaptureError {
  readonly status = 400;
  readonly type = 'validation_error';

  constructor(message: string, code: 'invalid_payload' | 'no_data' = 'invalid_payload') {
    super(code, message);
  }
}

/** The payload, once decompressed, is larger than the configured bound (413). */
export class PayloadTooLargeError extends CaptureError {
  readonly status = 413;
  readonly type = 'validation_error';

  constructor(readonly limitBytes: number) {
    super('payload_too_large', `decompressed payload is larger than ${limitBytes} bytes`);
  }
}

/**
 * An event of the request is larger than the queue takes (413). As rust/capture, whose Kafka sink
 * answers EventTooBig for the whole request, a batch holding one such event is refused entire (and
 * nothing of it stored): posthog-node then halves the batch until the event stands alone.
 */
export class EventTooLargeError extends CaptureError {
  readonly status = 413;
  readonly type = 'validation_error';

  constructor(readonly limitBytes: number) {
    super('event_too_large', `maximum event size exceeded: an event is larger than ${limitBytes} bytes`);
  }
}

/** No project API key anywhere in the request (401). */
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

/** The events of one request carry different project API keys (401). */
export class MultipleTokensError extends CaptureError {
  readonly status = 401;
  readonly type = 'authentication_error';

  constructor() {
    super('invalid_api_key', 'batch submitted with inconsistent api_key values');
  }
}

export type InvalidTokenReason =
  'not_a_string' | 'empty' | 'too_long' | 'not_ascii' | 'null_byte' | 'personal_api_key';

/** The project API key is not a well-formed token (401), e.g. a personal API key (`phx_…`). */
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
