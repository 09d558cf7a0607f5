/**
 * The framework-free core of capture: pure functions, no I/O. The capture app runs, per request:
 *
 *   const payload = decodePayload({ body, contentType, contentEncoding, query });  // 400 / 413
 *   const batch = parseBatch(payload, query);                                       // 400 / 401
 *   const teamId = await projectTokens.resolve(batch.token);                        // the app's I/O
 *   const { accepted, dropped } = normalizeBatch(batch, { teamId, ip, now: new Date() }); // 400 / 413
 *   const messages = toQueueMessages(accepted, maxEventBytes);                       // 413
 *
 * and answers a CaptureError with `error.status` and `error.toBody()`.
 */
export {
  CaptureError,
  EventTooLargeError,
  InvalidTokenError,
  MultipleTokensError,
  NoTokenError,
  PayloadInvalidError,
  PayloadTooLargeError,
  type CaptureErrorBody,
  type CaptureErrorType,
  type InvalidTokenReason,
} from './capture-errors';
export {
  DEFAULT_MAX_DECODED_BYTES,
  decodePayload,
  decodePayloadText,
  type DecodePayloadOptions,
  type QueryParams,
  type RawCaptureRequest,
} from './payload-decoder';
export {
  MAX_TOKEN_LENGTH,
  findEventsToken,
  parseBatch,
  validateToken,
  type ParsedBatch,
} from './batch-parser';
export {
  DEFAULT_MAX_EVENT_BYTES,
  MAX_DISTINCT_ID_LENGTH,
  createEventContext,
  extractDistinctId,
  normalizeBatch,
  normalizeEvent,
  normalizeUuid,
  type CaptureContext,
  type DropReason,
  type DroppedEvent,
  type EventContext,
  type EventOutcome,
  type NormalizedBatch,
} from './event-normalizer';
export {
  computeEventTimestamp,
  formatInstant,
  parseSentAtQueryParam,
  parseTimestamp,
  type EventTimestampInput,
  type PreciseInstant,
} from './timestamp.util';
export { decompressLzStringBase64, LzStringOutputTooLongError } from './lz-string.util';
export { MAX_JSON_NESTING, nestsAtLeast } from './json-nesting.util';
export { toQueueMessages } from './queue-messages';
