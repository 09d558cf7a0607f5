import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import {
  closeSharedHogQLParser,
  compilePropertyFilters,
  EVENT_FIELDS,
  HogQLCompiler,
  hogqlErrorFromClickHouse,
  QueryParams,
  STAR_FIELDS,
  type CompiledSelect,
} from '@hogbase/hogql';
import { ApiError } from '../common/api.error';
import { encodeEventCursor } from './event-cursor.util';
import { EVENT_RECORD_COLUMNS, EventListQuery, type EventWindow } from './event-list-query.util';
import { repeatedParam, singleParam, toApiError, type EventListRequest } from './event-list-request.util';
import { EventPersonsRepository } from './event-persons.repository';
import type { EventValuesQueryDto } from './event-query.dto';
import {
  isoTimestamp,
  parseJsonObject,
  toEventRecord,
  type EventPerson,
  type EventRecord,
  type EventRow,
} from './event.presenter';
import { EventStore } from './event-store.service';

/** How the next page is reached: a cursor past the last event served, or (groups) an offset. */
export type NextPage = { cursor: string } | { offset: number } | null;

export interface EventPage {
  kind: 'events';
  results: EventRecord[];
  next: NextPage;
}

/** A `select` page: one array per row, in the order of `columns`. */
export interface SelectPage {
  kind: 'select';
  columns: string[];
  types: string[];
  results: unknown[][];
  next: NextPage;
}

/** `values/`: PostHog answers at most 10 values of a property, over the last 7 days. */
const PROPERTY_VALUES_LIMIT = 10;
/** The events table's flag that lets `exact` property filters search the text first (migration 003). */
const PLAIN_PROPERTIES_COLUMN = 'properties_plain';
const CUSTOM_EVENT_NAMES_LIMIT = 10_000;

@Injectable()
export class EventService implements OnApplicationShutdown {
  private readonly compiler = new HogQLCompiler();

  constructor(
    private readonly store: EventStore,
    private readonly persons: EventPersonsRepository,
  ) {}

  async list(teamId: number, request: EventListRequest): Promise<EventPage | SelectPage> {
    let personDistinctIds: string[] | undefined;
    if (request.personId !== undefined) {
      personDistinctIds = await this.persons.distinctIdsOfPerson(teamId, request.personId);
      // An unknown person has no events (PostHog answers an empty page, not a 404).
      if (!personDistinctIds?.length) return this.emptyPage(request);
    }

    const params = new QueryParams();
    const conditions: string[] = [];
    let select: CompiledSelect | undefined;
    try {
      const properties = await compilePropertyFilters(request.properties, params, {
        compiler: this.compiler,
        plainPropertiesColumn: PLAIN_PROPERTIES_COLUMN,
      });
      if (properties) conditions.push(properties);
      if (request.where)
        conditions.push(...(await this.compiler.compileWhere(request.where, params)).conditions);
      if (request.select) select = await this.compiler.compileSelect(request.select, params);
    } catch (error) {
      throw toApiError(error);
    }

    const query = new EventListQuery({
      table: this.store.table,
      teamId,
      request,
      conditions,
      compiledParams: params.values,
      personDistinctIds,
      select,
    });
    const hasUserExpressions = conditions.length > 0 || select !== undefined;
    const run = async <T>(read: (sql: string, values: Record<string, unknown>) => Promise<T[]>) => {
      const attempt = async (window?: EventWindow, rows?: number): Promise<T[]> => {
        const { sql, params: values } = query.build(window, rows);
        try {
          return await read(sql, values);
        } catch (error) {
          const userError = hasUserExpressions ? hogqlErrorFromClickHouse(error) : undefined;
          throw userError ? toApiError(userError) : error;
        }
      };
      let window = query.firstWindow();
      if (!window) return attempt();
      // Windows are disjoint and newest first, so their rows concatenate into the one query's rows.
      const wanted = request.offset + request.limit + 1;
      const rows: T[] = [];
      for (let scanned = 1; ; scanned += 1) {
        rows.push(...(await attempt(window, wanted - rows.length)));
        if (rows.length >= wanted || window.start === undefined) return rows.slice(request.offset);
        window = query.nextWindow(window, rows.length, wanted - rows.length, scanned);
      }
    };

    if (!select) {
      const rows = await run((sql, values) => this.store.select<EventRow>(sql, values));
      const page = rows.slice(0, request.limit);
      const persons = await this.persons.personsByDistinctId(
        teamId,
        page.map((row) => row.distinct_id),
      );
      const last = page.at(-1);
      return {
        kind: 'events',
        results: page.map((row) => toEventRecord(row, persons.get(row.distinct_id) ?? null)),
        next:
          rows.length > request.limit && last
            ? { cursor: encodeEventCursor({ timestamp: last.timestamp, uuid: last.uuid }) }
            : null,
      };
    }

    let meta: { name: string; type: string }[] = [];
    const rows = await run(async (sql, values) => {
      const result = await this.store.selectCompact(sql, values);
      meta = result.meta;
      return result.data;
    });
    // The columns past the selected ones are the cursor's (timestamp, uuid), see EventListQuery.
    const columnCount = select.columns.length;
    const page = rows.slice(0, request.limit);
    let next: NextPage = null;
    if (rows.length > request.limit) {
      const last = page.at(-1)!;
      next = query.aggregates
        ? { offset: request.offset + request.limit }
        : {
            cursor: encodeEventCursor({
              timestamp: String(last[columnCount]),
              uuid: String(last[columnCount + 1]),
            }),
          };
    }
    return {
      kind: 'select',
      columns: select.columns.map((column) => column.label),
      types: meta.slice(0, columnCount).map((column) => column.type),
      results: page.map((row) =>
        select.columns.map((column, index) =>
          column.kind === 'star' ? starToObject(row[index]) : row[index],
        ),
      ),
      next,
    };
  }

  /** `id` is a UUID (EventUuidPipe). */
  async retrieve(teamId: number, id: string): Promise<EventRecord> {
    const [row] = await this.store.select<EventRow>(
      `SELECT ${EVENT_RECORD_COLUMNS.join(', ')}
         FROM ${this.store.table} FINAL
        WHERE team_id = {team_id:Int64} AND uuid = toUUID({id:String})
        LIMIT 1`,
      { team_id: teamId, id },
    );
    if (!row) throw new ApiError('not_found', `No events exist for event UUID ${id}`);
    const persons = await this.persons.personsByDistinctId(teamId, [row.distinct_id]);
    return toEventRecord(row, persons.get(row.distinct_id) ?? null);
  }

  /**
   * `values/`: `key=custom_event` gives the project's own event names (not `$`-prefixed ones);
   * any other key the distinct values of that property (or, with `is_column=true`, of that event
   * column) over the last 7 days, `value` narrowing them by substring, `event_name` by event.
   */
  async values(teamId: number, query: EventValuesQueryDto): Promise<{ name: unknown }[]> {
    const key = singleParam(query.key, 'key');
    if (key === undefined || key === '') throw new ApiError('invalid', 'You must provide a key', 'key');
    const params: Record<string, unknown> = { team_id: teamId };
    if (key === 'custom_event') {
      params.limit = CUSTOM_EVENT_NAMES_LIMIT;
      const rows = await this.store.select<{ event: string }>(
        `SELECT DISTINCT event FROM ${this.store.table}
          WHERE team_id = {team_id:Int64} AND NOT startsWith(event, '$')
          ORDER BY event LIMIT {limit:UInt64}`,
        params,
      );
      return rows.map((row) => ({ name: row.event }));
    }

    let expression: string;
    if (singleParam(query.is_column, 'is_column') === 'true') {
      const field = EVENT_FIELDS.get(key);
      if (!field) throw new ApiError('invalid_input', `${key} is not a column of events.`, 'key');
      expression = `toString(${field.sql})`;
    } else {
      params.key = key;
      expression = "JSONExtract(properties, {key:String}, 'Nullable(String)')";
    }
    const where = ['team_id = {team_id:Int64}', 'timestamp >= now64(6) - INTERVAL 7 DAY'];
    const eventNames = repeatedParam(query.event_name);
    if (eventNames.length > 0) {
      params.event_names = eventNames;
      where.push('event IN {event_names:Array(String)}');
    }
    const value = singleParam(query.value, 'value');
    let order = '';
    if (value) {
      params.pattern = `%${value.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
      where.push(`${expression} ILIKE {pattern:String}`);
      order = 'ORDER BY length(value), value';
    }
    params.limit = PROPERTY_VALUES_LIMIT;
    const rows = await this.store.select<{ value: string }>(
      `SELECT DISTINCT ${expression} AS value FROM ${this.store.table}
        WHERE ${where.join(' AND ')} AND value IS NOT NULL
        ${order} LIMIT {limit:UInt64}`,
      params,
    );
    return flattenValues(rows.map((row) => row.value)).map((name) => ({ name }));
  }

  async onApplicationShutdown(): Promise<void> {
    await closeSharedHogQLParser();
  }

  private emptyPage(request: EventListRequest): EventPage | SelectPage {
    if (!request.select) return { kind: 'events', results: [], next: null };
    return {
      kind: 'select',
      columns: request.select.length ? request.select : ['*'],
      types: [],
      results: [],
      next: null,
    };
  }
}

/** `*` comes back as a tuple of STAR_FIELDS: shown as an object, person fields nested, as PostHog did. */
function starToObject(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  const fields = Object.fromEntries(STAR_FIELDS.map((name, index) => [name, value[index]])) as Record<
    (typeof STAR_FIELDS)[number],
    unknown
  >;
  const { person_id, person_created_at, person_properties, properties, timestamp, created_at, ...rest } =
    fields;
  return {
    ...rest,
    properties: parseJsonObject(String(properties)),
    timestamp: isoTimestamp(String(timestamp)),
    created_at: isoTimestamp(String(created_at)),
    person: {
      id: person_id,
      created_at: isoTimestamp(String(person_created_at)),
      properties: parseJsonObject(String(person_properties)),
    },
  };
}

/** A value holding a JSON array counts as each of its items (PostHog flattens them too). */
function flattenValues(values: readonly string[]): unknown[] {
  const seen = new Set<string>();
  const result: unknown[] = [];
  for (const value of values) {
    let items: unknown[] = [value];
    if (value.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(value);
        if (Array.isArray(parsed)) items = parsed;
      } catch {
        // Not JSON: the text itself.
      }
    }
    for (const item of items) {
      const key = JSON.stringify(item);
      if (item === null || seen.has(key)) continue;
      seen.add(key);
      result.push(item);
    }
  }
  return result.slice(0, PROPERTY_VALUES_LIMIT);
}

export type { EventPerson };
