import {
  InvalidTokenError,
  MultipleTokensError,
  NoTokenError,
  PayloadInvalidError,
  type InvalidTokenReason,
} from './capture.errors';
import { isJsonObject } from './json-value.util';
import type { QueryParams } from './payload-decoder.util';
import { parseSentAtQueryParam, parseTimestamp, type PreciseInstant } from './timestamp.util';

export interface ParsedBatch {
  /** Validated for shape, not yet resolved to a project. */
  token: string;
  /** Any JSON value: the normaliser decides per event. */
  events: readonly unknown[];
  /** The body's, else `?sent_at=`/`?_=` in ms. */
  sentAt: PreciseInstant | null;
  historicalMigration: boolean;
  /** Arrays and objects of the body enclosing each event, which MAX_JSON_NESTING counts as serde does. */
  eventNesting: number;
}

/** As `rust/capture/src/token.rs`. */
export const MAX_TOKEN_LENGTH = 64;

/**
 * An array of events, the batch object `{api_key|token, batch, sent_at, historical_migration}` or a
 * single event. PayloadInvalidError (400) for anything else or no event; the token errors (401).
 */
export function parseBatch(payload: unknown, query: QueryParams = {}): ParsedBatch {
  let events: readonly unknown[];
  let batchToken: unknown = undefined;
  let bodySentAt: unknown = undefined;
  let historicalMigration = false;
  let eventNesting = 0;

  if (Array.isArray(payload)) {
    events = payload;
    eventNesting = 1;
  } else if (isJsonObject(payload)) {
    if ('batch' in payload) {
      const batch = payload.batch;
      if (!Array.isArray(batch))
        throw new PayloadInvalidError('failed to parse request: batch must be an array');
      events = batch;
      eventNesting = 2;
      batchToken = payload.api_key ?? payload.token;
      historicalMigration = payload.historical_migration === true;
    } else {
      // It may carry `sent_at` itself, as `posthog/api/capture.py` read it.
      events = [payload];
    }
    bodySentAt = payload.sent_at;
  } else {
    throw new PayloadInvalidError(
      'failed to parse request: expected an event object, an array of events or a batch object',
    );
  }
  if (events.length === 0) throw new PayloadInvalidError('request holds no event', 'no_data');

  const token =
    batchToken !== undefined && batchToken !== null
      ? validateToken(batchToken)
      : validateToken(findEventsToken(events));
  return { token, events, sentAt: resolveSentAt(bodySentAt, query), historicalMigration, eventNesting };
}

/** Events without a token take the others'; two different ones are an error. */
export function findEventsToken(events: readonly unknown[]): string {
  let found: string | undefined;
  for (const event of events) {
    const token = eventToken(event);
    if (token === undefined) continue;
    if (found === undefined) found = token;
    else if (found !== token) throw new MultipleTokensError();
  }
  if (found === undefined) throw new NoTokenError();
  return found;
}

/** The shape rules of `rust/capture/src/token.rs`. */
export function validateToken(token: unknown): string {
  const reason = invalidTokenReason(token);
  if (reason) throw new InvalidTokenError(reason);
  return token as string;
}

function invalidTokenReason(token: unknown): InvalidTokenReason | null {
  if (typeof token !== 'string') return 'not_a_string';
  if (token.length === 0) return 'empty';
  if (token.length > MAX_TOKEN_LENGTH) return 'too_long';
  for (let index = 0; index < token.length; index++) {
    const code = token.charCodeAt(index);
    if (code === 0) return 'null_byte';
    if (code > 0x7f) return 'not_ascii';
  }
  if (token.startsWith('phx_')) return 'personal_api_key';
  return null;
}

function eventToken(event: unknown): string | undefined {
  if (!isJsonObject(event)) return undefined;
  if (typeof event.token === 'string') return event.token;
  if (typeof event.$token === 'string') return event.$token;
  if (typeof event.api_key === 'string') return event.api_key;
  const properties = event.properties;
  if (isJsonObject(properties) && typeof properties.token === 'string') return properties.token;
  return undefined;
}

function resolveSentAt(bodySentAt: unknown, query: QueryParams): PreciseInstant | null {
  if (bodySentAt !== undefined && bodySentAt !== null) {
    const parsed = parseTimestamp(bodySentAt);
    if (parsed) return parsed;
  }
  return parseSentAtQueryParam(firstValue(query.sent_at)) ?? parseSentAtQueryParam(firstValue(query._));
}

function firstValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}
