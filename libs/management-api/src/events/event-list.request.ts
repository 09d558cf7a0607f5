import {
  addMicros,
  HogQLError,
  ONE_SECOND_MICROS,
  parseExpressionListParam,
  parsePropertiesParam,
  parseFilterDate,
  type DateValue,
} from '@hogbase/hogql';
import { ApiError } from '../common/api-error';
import { decodeEventCursor, type EventCursor } from './event-cursor.util';

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
  /** Where the previous page ended. */
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

export type QueryValues = Record<string, unknown>;

/**
 * One value of a query parameter. Express gives an array when a parameter repeats; a listing
 * filter given twice is ambiguous, so it is refused rather than one of the values picked.
 */
export function singleParam(query: QueryValues, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new ApiError('invalid_input', `Give ${name} at most once.`, name);
  }
  return value;
}

/** Every value of a repeatable parameter. */
export function repeatedParam(query: QueryValues, name: string): string[] {
  const value = query[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}

export function formatOf(query: QueryValues, accept: string | undefined): ResponseFormat {
  const format = singleParam(query, 'format');
  if (format === undefined || format === '') {
    return accept?.split(',').some((type) => type.trim().startsWith('text/csv')) ? 'csv' : 'json';
  }
  if (format !== 'json' && format !== 'csv') {
    throw new ApiError('invalid_choice', `"${format}" is not a valid choice: json or csv.`, 'format');
  }
  return format;
}

function limitOf(query: QueryValues, format: ResponseFormat): number {
  const raw = singleParam(query, 'limit');
  if (raw === undefined || raw === '') return format === 'csv' ? DEFAULT_CSV_LIMIT : DEFAULT_LIMIT;
  if (!/^\s*\+?\d+\s*$/.test(raw) || Number(raw) < 1) {
    throw new ApiError('invalid_input', 'limit must be a positive integer.', 'limit');
  }
  return Math.min(Number(raw), MAX_LIMIT);
}

/** PostHog reads a bad offset as 0. */
function offsetOf(query: QueryValues): number {
  const raw = singleParam(query, 'offset');
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

function dateOf(query: QueryValues, name: 'after' | 'before', now: Date): DateValue | undefined {
  const raw = singleParam(query, name);
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = parseFilterDate(raw, now);
  if (!value) {
    throw new ApiError(
      'invalid_input',
      `${name} must be an ISO 8601 date-time or a relative date such as -7d.`,
      name,
    );
  }
  return value;
}

/** `orderBy`: PostHog's JSON list; only the event order itself is meaningful for a listing. */
function orderOf(query: QueryValues): EventOrder {
  const raw = singleParam(query, 'orderBy');
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

function nonEmpty(query: QueryValues, name: string): string | undefined {
  const value = singleParam(query, name);
  return value === undefined || value === '' ? undefined : value;
}

/** Reads and checks the listing's parameters; a HogQL parameter error is a 400 naming it. */
export function parseEventListRequest(
  query: QueryValues,
  accept: string | undefined,
  now: Date = new Date(),
): EventListRequest {
  const format = formatOf(query, accept);
  const cursor = nonEmpty(query, 'cursor');
  try {
    return {
      format,
      limit: limitOf(query, format),
      offset: offsetOf(query),
      order: orderOf(query),
      after: dateOf(query, 'after', now),
      before:
        dateOf(query, 'before', now) ??
        addMicros(
          { epochMicros: BigInt(now.getTime()) * 1000n, dateOnly: false },
          DEFAULT_BEFORE_SLACK_MICROS,
        ),
      event: nonEmpty(query, 'event'),
      distinctId: nonEmpty(query, 'distinct_id'),
      personId: nonEmpty(query, 'person_id'),
      properties: parsePropertiesParam(singleParam(query, 'properties')),
      select: parseExpressionListParam(singleParam(query, 'select'), 'select'),
      where: parseExpressionListParam(singleParam(query, 'where'), 'where'),
      cursor: cursor === undefined ? undefined : decodeEventCursor(cursor),
    };
  } catch (error) {
    throw toApiError(error);
  }
}

/** HogQL errors are the caller's: a 400 naming the parameter (and the expression, in the message). */
export function toApiError(error: unknown): unknown {
  if (error instanceof HogQLError) return new ApiError('invalid_input', error.message, error.attr ?? null);
  return error;
}
