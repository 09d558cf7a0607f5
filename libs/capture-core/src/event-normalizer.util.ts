import type { CapturedEvent } from '@hogbase/event-contract';
import { v7 as uuidv7 } from 'uuid';

import type { ParsedBatch } from './batch-parser.util';
import { EventTooLargeError, PayloadInvalidError } from './capture.errors';
import { MAX_JSON_NESTING, nestsAtLeast } from './json-nesting.util';
import { isJsonObject, type JsonObject } from './json-value.util';
import { computeEventTimestamp, formatInstant, type PreciseInstant } from './timestamp.util';

/** Why one event was dropped: the request still answers 200 and the rest of the batch is ingested. */
export type DropReason =
  | 'not_an_object'
  | 'missing_event_name'
  | 'missing_distinct_id'
  /** Discarded as PostHog does. */
  | 'performance_event';

export type EventOutcome = { accepted: CapturedEvent } | { dropped: DropReason; detail: string };

export interface CaptureContext {
  teamId: number;
  /** X-Forwarded-For aware, as the app decides. */
  ip: string | null;
  now: Date;
  /** Bounds the queue message (toQueueMessages); an event whose JSON alone is longer is refused here. */
  maxEventBytes?: number;
}

/** KAFKA_PRODUCER_MESSAGE_MAX_BYTES of `rust/capture/src/config.rs`, here whatever the queue. */
export const DEFAULT_MAX_EVENT_BYTES = 1_000_000;

export interface EventContext {
  token: string;
  teamId: number;
  ip: string | null;
  now: Date;
  nowIso: string;
  sentAt: PreciseInstant | null;
  sentAtIso: string | null;
  historicalMigration: boolean;
  maxEventBytes: number;
  maxEventNesting: number;
}

export interface DroppedEvent {
  index: number;
  reason: DropReason;
  detail: string;
}

export interface NormalizedBatch {
  accepted: CapturedEvent[];
  dropped: DroppedEvent[];
}

export const MAX_DISTINCT_ID_LENGTH = 200;
const PERFORMANCE_EVENT = '$performance_event';
const LOOPBACK_IP = '127.0.0.1';
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SIMPLE_UUID_PATTERN = /^[0-9a-f]{32}$/i;
// A `\udXXX` escape that is not half of a pair, after an even number of backslashes (an escaped
// backslash followed by the letters "ud800" is text, left alone).
const LONE_SURROGATE_ESCAPE_ALL =
  /(?<!\\)((?:\\\\)*)\\u(?:d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|d[c-f][0-9a-f]{2})/gi;
const LONE_SURROGATE_ESCAPE = new RegExp(LONE_SURROGATE_ESCAPE_ALL.source, 'i');

export function createEventContext(batch: ParsedBatch, context: CaptureContext): EventContext {
  return {
    token: batch.token,
    teamId: context.teamId,
    ip: context.ip,
    now: context.now,
    nowIso: context.now.toISOString(),
    sentAt: batch.sentAt,
    sentAtIso: batch.sentAt ? formatInstant(batch.sentAt) : null,
    historicalMigration: batch.historicalMigration,
    maxEventBytes: context.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
    maxEventNesting: MAX_JSON_NESTING - batch.eventNesting,
  };
}

/** In request order. EventTooLargeError (413) or PayloadInvalidError (400, too deep) refuse it all. */
export function normalizeBatch(batch: ParsedBatch, context: CaptureContext): NormalizedBatch {
  const eventContext = createEventContext(batch, context);
  const accepted: CapturedEvent[] = [];
  const dropped: DroppedEvent[] = [];
  const events = batch.events;
  for (let index = 0; index < events.length; index++) {
    const outcome = normalizeEvent(events[index], eventContext);
    if ('accepted' in outcome) accepted.push(outcome.accepted);
    else dropped.push({ index, reason: outcome.dropped, detail: outcome.detail });
  }
  return { accepted, dropped };
}

export function normalizeEvent(input: unknown, context: EventContext): EventOutcome {
  if (!isJsonObject(input)) return { dropped: 'not_an_object', detail: 'event is not a JSON object' };
  let raw = input;
  let data: string;
  try {
    data = JSON.stringify(raw);
  } catch (error) {
    // JSON.stringify runs out of stack on input nested thousands deep (JSON.parse does not).
    if (isStackOverflow(error)) throw nestedTooDeeply();
    throw error;
  }
  // NOTE: checked on the text JSON.stringify just made, not by walking the parsed event: that
  // walk would cost more than everything else capture does per event.
  if (nestsAtLeast(data, context.maxEventNesting)) throw nestedTooDeeply();
  if (data.includes('\\ud') && LONE_SURROGATE_ESCAPE.test(data)) {
    // TRICKY: ClickHouse refuses a lone UTF-16 surrogate, and with it the whole insert: it becomes
    // U+FFFD and the event is kept. JSON.stringify writes it as a `\udXXX` escape, fixed here.
    data = data.replace(LONE_SURROGATE_ESCAPE_ALL, '$1\\ufffd');
    raw = JSON.parse(data) as JsonObject;
  }

  const event = raw.event;
  if (typeof event !== 'string' || event.length === 0) {
    return {
      dropped: 'missing_event_name',
      detail: typeof event === 'string' ? 'event submitted with an empty event name' : 'event has no name',
    };
  }
  if (event === PERFORMANCE_EVENT)
    return { dropped: 'performance_event', detail: `${PERFORMANCE_EVENT} is not ingested` };

  const properties = isJsonObject(raw.properties) ? raw.properties : undefined;
  const distinctId = extractDistinctId(raw, properties);
  if (distinctId === null)
    return { dropped: 'missing_distinct_id', detail: 'event submitted without a distinct_id' };

  // UTF-8 takes at least a byte per UTF-16 code unit; the exact bound is in toQueueMessages.
  if (data.length > context.maxEventBytes) throw new EventTooLargeError(context.maxEventBytes);

  const captured: CapturedEvent = {
    uuid: normalizeUuid(raw.uuid) ?? uuidv7(),
    distinct_id: distinctId,
    ip: properties !== undefined && 'capture_internal' in properties ? LOOPBACK_IP : context.ip,
    data,
    now: context.nowIso,
    sent_at: context.sentAtIso,
    token: context.token,
    team_id: context.teamId,
    event,
    timestamp: computeEventTimestamp({
      timestamp: raw.timestamp,
      offset: raw.offset,
      sentAt: context.sentAt,
      ignoreSentAt: properties?.$ignore_sent_at === true,
      now: context.now,
      nowIso: context.nowIso,
    }),
  };
  if (context.historicalMigration) captured.historical_migration = true;
  return { accepted: captured };
}

/**
 * Non-strings are JSON-encoded, NUL becomes U+FFFD, and the result is cut to 200 code points, as
 * `rust/capture/src/v0_request.rs` counts them. Null when absent or empty.
 */
export function extractDistinctId(raw: JsonObject, properties: JsonObject | undefined): string | null {
  let value = raw.distinct_id;
  if (value === undefined || value === null) value = raw.$distinct_id;
  if ((value === undefined || value === null) && properties !== undefined) value = properties.distinct_id;
  if (value === undefined || value === null) return null;
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length === 0) return null;
  if (text.length > MAX_DISTINCT_ID_LENGTH) text = truncateCodePoints(text, MAX_DISTINCT_ID_LENGTH);
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/** Lowercase hyphenated, from the forms rust's `Uuid` parses (simple, braced, `urn:uuid:`); else null. */
export function normalizeUuid(value: unknown): string | null {
  if (typeof value !== 'string' || value.length < 32 || value.length > 45) return null;
  let text = value;
  if (text.startsWith('urn:uuid:')) text = text.slice(9);
  else if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (text.length === 32 && SIMPLE_UUID_PATTERN.test(text)) {
    text = `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
  }
  return text.length === 36 && UUID_PATTERN.test(text) ? text.toLowerCase() : null;
}

function nestedTooDeeply(): PayloadInvalidError {
  return new PayloadInvalidError(
    `failed to parse request: recursion limit exceeded (arrays and objects nested ${MAX_JSON_NESTING} deep, the body's own included)`,
  );
}

function isStackOverflow(error: unknown): boolean {
  // By name, not `instanceof RangeError`: the error may come from another realm (Jest's VM).
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'RangeError';
}

function truncateCodePoints(text: string, maxCodePoints: number): string {
  let end = 0;
  for (let count = 0; count < maxCodePoints && end < text.length; count++) {
    const code = text.charCodeAt(end);
    const isPair = code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(end + 1));
    end += isPair ? 2 : 1;
  }
  return text.slice(0, end);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
