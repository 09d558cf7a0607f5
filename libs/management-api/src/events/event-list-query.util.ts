import { formatClickHouseDateTime, ONE_DAY_MICROS, type CompiledSelect } from '@hogbase/hogql';
import type { EventListRequest } from './event-list-request.util';

export const EVENT_RECORD_COLUMNS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'distinct_id',
  'elements_chain',
];

/** Hidden columns a non-aggregating `select` also reads, to build the next page's cursor. */
export const CURSOR_TIMESTAMP_COLUMN = '__cursor_timestamp';
export const CURSOR_UUID_COLUMN = '__cursor_uuid';

export interface EventListQueryParts {
  table: string;
  teamId: number;
  request: EventListRequest;
  conditions: string[];
  compiledParams: Readonly<Record<string, string | number>>;
  personDistinctIds?: string[];
  select?: CompiledSelect;
}

/** `[start, end)` in epoch microseconds; an absent bound is open. */
export interface EventWindow {
  start: bigint | undefined;
  end: bigint | undefined;
}

const MAX_WINDOWS = 5;
/** DateTime64's first moment: ClickHouse cannot parse an earlier window start. */
const EARLIEST_MICROS = BigInt(Date.UTC(1900, 0, 1)) * 1000n;

export interface BuiltQuery {
  sql: string;
  params: Record<string, unknown>;
}

/**
 * The listing's SQL; every value is bound, ours unsuffixed, the compiler's as `p<n>`. (timestamp,
 * uuid) is a total order, so the cursor neither skips nor repeats events sharing a timestamp.
 * FINAL collapses a redelivered event's duplicate rows.
 */
export class EventListQuery {
  constructor(private readonly parts: EventListQueryParts) {}

  /** When `select` aggregates, rows are groups, paged by offset. */
  get aggregates(): boolean {
    return this.parts.select?.hasAggregation ?? false;
  }

  /**
   * The day of the upper bound, for newest-first event pages: a window that fills the page spares
   * FINAL from merging every older part. None when not windowed or the day reaches `after`.
   */
  firstWindow(): EventWindow | undefined {
    const { request } = this.parts;
    if (request.order !== 'desc' || this.aggregates) return undefined;
    const upper = this.upperMicros();
    const start = upper - mod(upper, ONE_DAY_MICROS);
    if (request.after && start <= request.after.epochMicros) return undefined;
    return { start, end: undefined };
  }

  /**
   * The window right below `previous`, or `{start: undefined}` for everything older. Sized by the
   * density seen so far plus a quarter (six times the span after an empty scan), in whole days
   * since the sorting key orders rows by day.
   */
  nextWindow(previous: EventWindow, found: number, missing: number, scanned: number): EventWindow {
    const end = previous.start;
    const rest: EventWindow = { start: undefined, end };
    if (end === undefined || scanned >= MAX_WINDOWS) return rest;
    const covered = this.upperMicros() - end;
    const span =
      found > 0 && covered > 0n ? (covered * BigInt(missing) * 5n) / (BigInt(found) * 4n) : covered * 6n;
    const days = maxMicros((span + ONE_DAY_MICROS / 2n) / ONE_DAY_MICROS, 1n);
    const start = end - days * ONE_DAY_MICROS;
    const { after } = this.parts.request;
    if (start <= EARLIEST_MICROS || (after && start <= after.epochMicros)) return rest;
    return { start, end };
  }

  /**
   * `limit + 1` rows, the extra one telling whether a next page exists. Within a window, `rows`
   * replaces limit and offset: the caller concatenates windows and applies the offset itself.
   */
  build(window?: EventWindow, rows?: number): BuiltQuery {
    const { table, teamId, request, conditions, compiledParams, personDistinctIds, select } = this.parts;
    const params: Record<string, unknown> = {
      ...compiledParams,
      team_id: teamId,
      before: formatClickHouseDateTime(request.before),
      limit: rows ?? request.limit + 1,
      offset: rows === undefined ? request.offset : 0,
    };
    const where = ['team_id = {team_id:Int64}', "timestamp < toDateTime64({before:String}, 6, 'UTC')"];
    if (request.after) {
      params.after = formatClickHouseDateTime(request.after);
      where.push("timestamp > toDateTime64({after:String}, 6, 'UTC')");
    }
    if (window?.start !== undefined) {
      params.window_start = formatMicros(window.start);
      where.push("timestamp >= toDateTime64({window_start:String}, 6, 'UTC')");
    }
    if (window?.end !== undefined) {
      params.window_end = formatMicros(window.end);
      where.push("timestamp < toDateTime64({window_end:String}, 6, 'UTC')");
    }
    if (request.cursor && !this.aggregates) {
      params.cursor_timestamp = request.cursor.timestamp;
      params.cursor_uuid = request.cursor.uuid;
      const [bound, past] = request.order === 'desc' ? ['<=', '<'] : ['>=', '>'];
      const cursorTime = "toDateTime64({cursor_timestamp:String}, 6, 'UTC')";
      // The plain bound lets the timestamp index prune; the disjunction orders within it.
      where.push(
        `timestamp ${bound} ${cursorTime}`,
        `(timestamp ${past} ${cursorTime} OR uuid ${past} toUUID({cursor_uuid:String}))`,
      );
    }
    if (request.event !== undefined) {
      params.event = request.event;
      where.push('event = {event:String}');
    }
    if (request.distinctId !== undefined) {
      params.distinct_id = request.distinctId;
      where.push('distinct_id = {distinct_id:String}');
    }
    if (personDistinctIds !== undefined) {
      params.person_distinct_ids = personDistinctIds;
      where.push('distinct_id IN {person_distinct_ids:Array(String)}');
    }
    where.push(...conditions.map((condition) => `(${condition})`));

    const direction = request.order === 'desc' ? 'DESC' : 'ASC';
    let columns: string;
    let groupBy = '';
    let orderBy = `timestamp ${direction}, uuid ${direction}`;
    if (!select) {
      columns = EVENT_RECORD_COLUMNS.join(', ');
    } else if (select.hasAggregation) {
      columns = select.columns.map((column) => `${column.sql} AS ${column.columnAlias}`).join(', ');
      if (select.groupBy.length > 0) groupBy = `GROUP BY ${select.groupBy.join(', ')}`;
      // Ordering by every column is a total order over groups, so offset pages are stable.
      orderBy = select.columns.map((column) => column.columnAlias).join(', ');
    } else {
      columns = [
        ...select.columns.map((column) => `${column.sql} AS ${column.columnAlias}`),
        `timestamp AS ${CURSOR_TIMESTAMP_COLUMN}`,
        `uuid AS ${CURSOR_UUID_COLUMN}`,
      ].join(', ');
    }
    const sql = [
      `SELECT ${columns}`,
      `FROM ${table} FINAL`,
      `WHERE ${where.join('\n  AND ')}`,
      groupBy,
      `ORDER BY ${orderBy}`,
      'LIMIT {limit:UInt64} OFFSET {offset:UInt64}',
    ]
      .filter(Boolean)
      .join('\n');
    return { sql, params };
  }

  private upperMicros(): bigint {
    const { request } = this.parts;
    return request.cursor
      ? minMicros(request.before.epochMicros, cursorMicros(request.cursor.timestamp))
      : request.before.epochMicros;
  }
}

function formatMicros(epochMicros: bigint): string {
  return formatClickHouseDateTime({ epochMicros, dateOnly: false });
}

function cursorMicros(timestamp: string): bigint {
  const [date, time] = timestamp.split(' ');
  const [seconds, fraction] = time.split('.');
  return BigInt(Date.parse(`${date}T${seconds}Z`)) * 1000n + BigInt(fraction);
}

const minMicros = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxMicros = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const mod = (value: bigint, divisor: bigint): bigint => ((value % divisor) + divisor) % divisor;
