import {
  addMicros,
  HogQLError,
  ONE_SECOND_MICROS,
  parseExpressionListParam,
  parsePropertiesParam,
  parseFilterDate,
  type DateValue,
} from '@hogbase/hogql';
import { ApiError } from '../common/api.error';
import { decodeEventCursor, type EventCursor } from './event-cursor.util';
import type { EventListQueryDto } from './event-query.dto';

export type EventOrder = 'desc' | 'asc';
export type ResponseFormat = 'json' | 'csv';

/** The listing's query parameters, checked. Everything a query binds comes from here. */
export interface EventListRequest {
  format: ResponseFormat;
  limit: number;
  offset: number;
  order: EventOrder;
  /** Only events strictly after / before these instants. */
  after?: DateValue;
  before: DateValue;
  event?: string;
  distinctId?: string;
  /** A person's id (Postgres pk) or UUID: the events of its distinct ids. */
  personId?: string;
  /** The parsed `properties` JSON, compiled by @hogbase/hogql. */
  properties?: unknown;
  select?: string[];
  where?: string[];
  cursor?: EventCursor;
}

export const DEFAULT_LIMIT = 100;
/** PostHog's default for CSV exports (QUERY_DEFAULT_EXPORT_LIMIT). */
export const DEFAULT_CSV_LIMIT = 3_500;
/** PostHog 2025's MAX_SELECT_RETURNED_ROWS. */
export const MAX_LIMIT = 50_000;
/** A larger offset would have ClickHouse read and drop that many rows: page with `next` instead. */
export const MAX_OFFSET = 1_000_000;
/** Without `before`, events stamped slightly in the future (clock skew) are still listed. */
const DEFAULT_BEFORE_SLACK_MICROS = 5n * ONE_SECOND_MICROS;

/** A filter given twice is ambiguous, so refused rather than one of its values picked. */
export function singleParam(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new ApiError('invalid_input', `Give ${name} at most once.`, name);
  }
  return value;
}

export function repeatedParam(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}

/** `?format=`, or without one the Accept header. */
export function formatOf(value: unknown, accept: string | undefined): ResponseFormat {
  const format = singleParam(value, 'format');
  if (format === undefined || format === '') {
    return accept?.split(',').some((type) => type.trim().startsWith('text/csv')) ? 'csv' : 'json';
  }
  if (format !== 'json' && format !== 'csv') {
    throw new ApiError('invalid_choice', `"${format}" is not a valid choice: json or csv.`, 'format');
  }
  return format;
}

function limitOf(value: unknown, format: ResponseFormat): number {
  const raw = singleParam(value, 'limit');
  if (raw === undefined || raw === '') return format === 'csv' ? DEFAULT_CSV_LIMIT : DEFAULT_LIMIT;
  if (!/^\s*\+?\d+\s*$/.test(raw) || Number(raw) < 1) {
    throw new ApiError('invalid_input', 'limit must be a positive integer.', 'limit');
  }
  return Math.min(Number(raw), MAX_LIMIT);
}

/** PostHog reads a bad offset as 0. */
function offsetOf(value: unknown): number {
  const raw = singleParam(value, 'offset');
  if (raw === undefined || !/^\s*\+?\d+\s*$/.test(raw)) return 0;
  const offset = Number(raw);
  if (offset > MAX_OFFSET) {
    throw new ApiError(
      'invalid_input',
      `offset is at most ${MAX_OFFSET}: follow the next link to page further.`,
      'offset',
    );
  }
  return offset;
}

function dateOf(value: unknown, name: 'after' | 'before', now: Date): DateValue | undefined {
  const raw = singleParam(value, name);
  if (raw === undefined || raw.trim() === '') return undefined;
  const date = parseFilterDate(raw, now);
  if (!date) {
    throw new ApiError(
      'invalid_input',
      `${name} must be an ISO 8601 date-time or a relative date such as -7d.`,
      name,
    );
  }
  return date;
}

/** `orderBy`: PostHog's JSON list; only the event order itself is meaningful for a listing. */
function orderOf(value: unknown): EventOrder {
  const raw = singleParam(value, 'orderBy');
  if (raw === undefined || raw.trim() === '') return 'desc';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 1 &&
    (parsed[0] === '-timestamp' || parsed[0] === 'timestamp')
  ) {
    return parsed[0] === '-timestamp' ? 'desc' : 'asc';
  }
  throw new ApiError('invalid_input', 'orderBy must be ["-timestamp"] or ["timestamp"].', 'orderBy');
}

function nonEmpty(value: unknown, name: string): string | undefined {
  const text = singleParam(value, name);
  return text === undefined || text === '' ? undefined : text;
}

/** Checks the parameters in a fixed order; a HogQL parameter error is a 400 naming it. */
export function parseEventListRequest(
  query: EventListQueryDto,
  format: ResponseFormat = 'json',
  now: Date = new Date(),
): EventListRequest {
  const cursor = nonEmpty(query.cursor, 'cursor');
  try {
    return {
      format,
      limit: limitOf(query.limit, format),
      offset: offsetOf(query.offset),
      order: orderOf(query.orderBy),
      after: dateOf(query.after, 'after', now),
      before:
        dateOf(query.before, 'before', now) ??
        addMicros(
          { epochMicros: BigInt(now.getTime()) * 1000n, dateOnly: false },
          DEFAULT_BEFORE_SLACK_MICROS,
        ),
      event: nonEmpty(query.event, 'event'),
      distinctId: nonEmpty(query.distinct_id, 'distinct_id'),
      personId: nonEmpty(query.person_id, 'person_id'),
      properties: parsePropertiesParam(singleParam(query.properties, 'properties')),
      select: parseExpressionListParam(singleParam(query.select, 'select'), 'select'),
      where: parseExpressionListParam(singleParam(query.where, 'where'), 'where'),
      cursor: cursor === undefined ? undefined : decodeEventCursor(cursor),
    };
  } catch (error) {
    throw toApiError(error);
  }
}

/** HogQL errors are the caller's: a 400 naming the parameter. */
export function toApiError(error: unknown): unknown {
  if (error instanceof HogQLError) return new ApiError('invalid_input', error.message, error.attr ?? null);
  return error;
}
