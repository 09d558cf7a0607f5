import { assertDatabaseName, EVENTS_TABLE } from '@hogbase/clickhouse';

// A run's ClickHouse queries; what makes runs exact (each event's owning time) is in libs/workers/README.md.

/** As PostHog's batch exports name them. */
const JSON_FIELDS: Record<string, string> = {
  uuid: 'toJSONString(toString(events.uuid))',
  event: 'toJSONString(events.event)',
  timestamp: `toJSONString(formatDateTime(events.timestamp, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC'))`,
  created_at: `toJSONString(formatDateTime(events.created_at, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC'))`,
  _inserted_at: `toJSONString(formatDateTime(events._timestamp, '%Y-%m-%dT%H:%i:%SZ', 'UTC'))`,
  distinct_id: 'toJSONString(events.distinct_id)',
  team_id: 'toString(events.team_id)',
  properties: rawJson('events.properties'),
  elements_chain: 'toJSONString(events.elements_chain)',
  person_id: 'toJSONString(toString(events.person_id))',
  person_properties: rawJson('events.person_properties'),
  set: `if(JSONHas(events.properties, '$set'), ${rawJson("JSONExtractRaw(events.properties, '$set')")}, 'null')`,
  set_once: `if(JSONHas(events.properties, '$set_once'), ${rawJson("JSONExtractRaw(events.properties, '$set_once')")}, 'null')`,
};

/**
 * Embedded raw, so that objects stay objects; line breaks (only whitespace in compact JSON) become
 * spaces so that each row stays one line; a value that is not JSON goes out as a string.
 */
function rawJson(column: string): string {
  return `if(isValidJSON(${column}), replaceRegexpAll(${column}, '[\\r\\n]', ' '), toJSONString(${column}))`;
}

/** PostHog's S3 export's default fields. */
export const S3_DEFAULT_FIELDS = [
  'uuid',
  'timestamp',
  '_inserted_at',
  'created_at',
  'event',
  'properties',
  'distinct_id',
  'elements_chain',
  'person_properties',
  'person_id',
] as const;

/** ExportedEventRow, for the Postgres and HTTP destinations. */
export const ROW_FIELDS = [
  'uuid',
  'event',
  'timestamp',
  'created_at',
  '_inserted_at',
  'distinct_id',
  'team_id',
  'properties',
  'elements_chain',
  'person_id',
  'person_properties',
  'set',
  'set_once',
] as const;

/** Typed; JSON columns as strings. */
const PARQUET_FIELDS: Record<string, string> = {
  uuid: 'toString(events.uuid)',
  timestamp: 'events.timestamp',
  _inserted_at: 'events._timestamp',
  created_at: 'events.created_at',
  event: 'events.event',
  properties: 'events.properties',
  distinct_id: 'events.distinct_id',
  elements_chain: 'events.elements_chain',
  person_properties: 'events.person_properties',
  person_id: 'toString(events.person_id)',
};

export interface CustomColumns {
  columns: { alias: string; sql: string }[];
  params: Readonly<Record<string, string | number>>;
}

export interface RunSelection {
  database: string;
  teamId: number;
  /** Null: everything before `end` (a backfill from the beginning). */
  start: Date | null;
  end: Date;
  /** The export's creation: events captured before it go by `timestamp`. */
  lateSince: Date;
  lagSeconds: number;
  includeEvents?: readonly string[];
  excludeEvents?: readonly string[];
}

export interface RunCursor {
  /** ClickHouse's `YYYY-MM-DD hh:mm:ss.ffffff` (UTC). */
  timestamp: string;
  uuid: string;
}

export function encodeCursor(cursor: RunCursor): string {
  return `${cursor.timestamp}|${cursor.uuid}`;
}

export function decodeCursor(text: string | null): RunCursor | undefined {
  if (!text) return undefined;
  const [timestamp, uuid] = text.split('|');
  if (!timestamp || !uuid) throw new Error(`not a run cursor: ${text}`);
  return { timestamp, uuid };
}

export interface BuiltQuery {
  query: string;
  params: Record<string, unknown>;
}

function selection(selection: RunSelection, after: RunCursor | undefined, until?: RunCursor): BuiltQuery {
  // The owning time never precedes `timestamp`: `timestamp < end` lets ClickHouse skip partitions.
  const owner =
    "if(events.created_at < {be_late_since:DateTime64(6, 'UTC')}, events.timestamp, " +
    'greatest(events.timestamp, events.created_at - toIntervalSecond({be_lag:UInt32})))';
  const conditions = [
    'events.team_id = {be_team:Int64}',
    "events.timestamp < {be_end:DateTime64(6, 'UTC')}",
    `${owner} < {be_end:DateTime64(6, 'UTC')}`,
  ];
  const params: Record<string, unknown> = {
    be_team: selection.teamId,
    be_end: clickhouseTime(selection.end),
    be_late_since: clickhouseTime(selection.lateSince),
    be_lag: selection.lagSeconds,
  };
  if (selection.start) {
    // Implied by the owner's bound; spelt as the arrival_minmax index's expression, which skips granules.
    conditions.push(
      "greatest(events.timestamp, events.created_at) >= {be_start:DateTime64(6, 'UTC')}",
      `${owner} >= {be_start:DateTime64(6, 'UTC')}`,
    );
    params.be_start = clickhouseTime(selection.start);
  }
  if (selection.includeEvents?.length) {
    conditions.push('events.event IN {be_include:Array(String)}');
    params.be_include = selection.includeEvents;
  }
  if (selection.excludeEvents?.length) {
    conditions.push('events.event NOT IN {be_exclude:Array(String)}');
    params.be_exclude = selection.excludeEvents;
  }
  if (after) {
    conditions.push(
      "(events.timestamp, events.uuid) > ({be_after_ts:DateTime64(6, 'UTC')}, {be_after_uuid:UUID})",
    );
    params.be_after_ts = after.timestamp;
    params.be_after_uuid = after.uuid;
  }
  if (until) {
    conditions.push(
      "(events.timestamp, events.uuid) <= ({be_until_ts:DateTime64(6, 'UTC')}, {be_until_uuid:UUID})",
    );
    params.be_until_ts = until.timestamp;
    params.be_until_uuid = until.uuid;
  }
  const table = `${assertDatabaseName(selection.database)}.${EVENTS_TABLE}`;
  return { query: `FROM ${table} AS events FINAL WHERE ${conditions.join(' AND ')}`, params };
}

export function countQuery(run: RunSelection): BuiltQuery {
  const { query, params } = selection(run, undefined);
  return { query: `SELECT count() AS rows ${query}`, params };
}

/** How many rows, and the cursor of the last (none when the run is done). */
export function chunkBoundsQuery(
  run: RunSelection,
  after: RunCursor | undefined,
  maxRows: number,
): BuiltQuery {
  const { query, params } = selection(run, after);
  return {
    query:
      `SELECT count() AS rows, toString(max((timestamp, uuid)).1) AS last_timestamp, toString(max((timestamp, uuid)).2) AS last_uuid ` +
      `FROM (SELECT events.timestamp AS timestamp, events.uuid AS uuid ${query} ORDER BY events.timestamp, events.uuid LIMIT {be_limit:UInt64})`,
    params: { ...params, be_limit: maxRows },
  };
}

/** `(after, until]`; JSON lines built in SQL (TSVRaw writes them as they are) so JSON columns stay objects. */
export function chunkRowsQuery(
  run: RunSelection,
  chunk: { after: RunCursor | undefined; until: RunCursor },
  shape: { format: 'JSONEachRow' | 'Parquet'; fields: readonly string[]; custom?: CustomColumns },
): BuiltQuery {
  const { query, params } = selection(run, chunk.after, chunk.until);
  const order = 'ORDER BY events.timestamp, events.uuid';
  if (shape.format === 'Parquet') {
    const columns = shape.custom
      ? shape.custom.columns.map(({ alias, sql }) => `${sql} AS ${quoteIdentifier(alias)}`)
      : shape.fields.map(
          (field) => `${PARQUET_FIELDS[field] ?? fieldError(field)} AS ${quoteIdentifier(field)}`,
        );
    return {
      query: `SELECT ${columns.join(', ')} ${query} ${order} FORMAT Parquet`,
      params: { ...params, ...(shape.custom?.params ?? {}) },
    };
  }
  const members = shape.custom
    ? shape.custom.columns.map(({ alias, sql }) => jsonMember(alias, `toJSONString(${sql})`))
    : shape.fields.map((field) => jsonMember(field, JSON_FIELDS[field] ?? fieldError(field)));
  return {
    query: `SELECT concat('{', ${members.join(", ',', ")}, '}') AS line ${query} ${order} FORMAT TSVRaw`,
    params: { ...params, ...(shape.custom?.params ?? {}) },
  };
}

function jsonMember(name: string, valueSql: string): string {
  return `${sqlString(`${JSON.stringify(name)}:`)}, ${valueSql}`;
}

/** Names come from our field table or validated aliases. */
function sqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

function fieldError(field: string): never {
  throw new Error(`no export field named ${field}`);
}

/** What ClickHouse parses as DateTime64(6, 'UTC'). */
export function clickhouseTime(date: Date): string {
  return `${date.toISOString().slice(0, 23).replace('T', ' ')}000`;
}
