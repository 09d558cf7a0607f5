import { formatClickHouseDateTime, ONE_DAY_MICROS, type CompiledSelect } from '@hogbase/hogql';
import type { EventListRequest } from './event-list-request.util';

/** The columns an event record is built from. */
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
  /** `<database>.events`. */
  table: string;
  teamId: number;
  request: EventListRequest;
  /** Compiled `properties` and `where` conditions (their values are bound in `compiledParams`). */
  conditions: string[];
  compiledParams: Readonly<Record<string, string | number>>;
  /** The distinct ids of `person_id`, when it was given. */
  personDistinctIds?: string[];
  /** The compiled `select`, when one was given. */
  select?: CompiledSelect;
}

/**
 * A time range of a newest-first page, `[start, end)` in epoch microseconds: no start reads
 * everything older than `end`, no end everything up to the request's upper bound.
 */
export interface EventWindow {
  start: bigint | undefined;
  end: bigint | undefined;
}

/** Windows a page reads before it reads everything older in one query. */
const MAX_WINDOWS = 5;
/**
 * DateTime64's first moment, 1900-01-01: a window that would start before it reads everything
 * older instead (a sparse match can ask for a span of centuries, which ClickHouse cannot parse).
 */
const EARLIEST_MICROS = BigInt(Date.UTC(1900, 0, 1)) * 1000n;

export interface BuiltQuery {
  sql: string;
  params: Record<string, unknown>;
}

/**
 * The listing's SQL. Every value is a bound parameter: ours under names without a digit suffix,
 * the compiler's as `p<n>`. The project condition comes first and is not optional.
 *
 * Events come newest first (or oldest first) by (timestamp, uuid): a total order, so the cursor
 * "strictly past the last row served" neither skips nor repeats an event even when thousands share
 * a timestamp. FINAL collapses a redelivered event's duplicate rows before they are counted.
 */
export class EventListQuery {
  constructor(private readonly parts: EventListQueryParts) {}

  /** True when `select` aggregates: rows are groups, paged by offset, not events. */
  get aggregates(): boolean {
    return this.parts.select?.hasAggregation ?? false;
  }

  /**
   * The first time window a newest-first page reads: the day of the upper bound. A window that
   * fills the page spares ClickHouse every older part (FINAL merges what it reads); one that does
   * not still serves the rows it found, and `nextWindow` continues below it. None for oldest-first
   * or aggregating queries, nor when the day starts at or before `after`.
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
   * The window right below `previous` (so no event is read twice), or `{start: undefined}` for
   * everything older. `found` events matched in the `scanned` windows so far and `missing` more
   * are needed: the next window spans what the density seen so far says holds them, with a
   * quarter to spare; after an empty scan, six times the span scanned. Windows are whole days
   * (the nearest number, at least one): the sorting key orders a project's rows by day, so a
   * window that ends inside a day still reads that day's granules.
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
   * The page's query; `limit + 1` rows, the extra one saying whether there is a next page. Within
   * a window, `rows` (from its first row, no offset) replaces the request's limit and offset: the
   * caller concatenates windows and applies the offset itself.
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
      // Groups are unique on their keys, so ordering by every column is a total order: offset
      // pages neither skip nor repeat a group. The first column leads, ascending, as PostHog ordered.
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

  /** The newest moment a page can hold: `before`, or the cursor's timestamp when older. */
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
