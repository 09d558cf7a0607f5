import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { assertDatabaseName } from './sql-identifier.util';

export const EVENTS_TABLE = 'events';

/**
 * One row of the events table as ingestion writes it. Date-times are UTC text in ClickHouse's
 * format (`toClickHouseDateTime64` converts ISO 8601). Optional fields take the column default:
 * `$group_N` are then read from `properties.$group_N`, `_timestamp` is the insert time.
 */
export interface EventRow {
  uuid: string;
  event: string;
  /** The event's properties, a JSON object encoded as a string. */
  properties: string;
  /** `YYYY-MM-DD hh:mm:ss.ffffff`, UTC. */
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain?: string;
  /** When capture received the event (the same for every delivery of it), `YYYY-MM-DD hh:mm:ss.ffffff`, UTC. */
  created_at: string;
  person_id: string;
  /** JSON object encoded as a string; `{}` when absent. */
  person_properties?: string;
  /** `YYYY-MM-DD hh:mm:ss[.fff]`, UTC. */
  person_created_at?: string;
  $group_0?: string;
  $group_1?: string;
  $group_2?: string;
  $group_3?: string;
  $group_4?: string;
  /** The version ReplacingMergeTree keeps the latest of: `YYYY-MM-DD hh:mm:ss`, UTC. */
  _timestamp?: string;
  /** Kafka offset of the message the event came from (kafkajs gives it as a string). */
  _offset?: number | string;
}

/** A row as read back: every column present; 64-bit integers other than team_id stay strings. */
export interface StoredEventRow extends Required<Omit<EventRow, '_offset'>> {
  _offset: string;
}

/** Every column of the events table, in its order. */
export const EVENTS_TABLE_COLUMNS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'team_id',
  'distinct_id',
  'elements_chain',
  'created_at',
  'person_id',
  'person_properties',
  'person_created_at',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
  '_timestamp',
  '_offset',
] as const satisfies readonly (keyof StoredEventRow)[];

const INSERT_SETTINGS: ClickHouseSettings = {
  // Written when the insert returns: ingestion commits Kafka offsets right after it.
  async_insert: 0,
  // On a cluster `events` is a Distributed table; write through to the shards before returning
  // instead of leaving the rows in the initiating node's send queue.
  insert_distributed_sync: 1,
  // A misspelt field must fail the insert, not be dropped silently.
  input_format_skip_unknown_fields: 0,
};

/**
 * Inserts a batch in one INSERT (JSONEachRow), so a batch is one part, not one part per event.
 * Inserting rows again is harmless: the table collapses rows with the same team, day and uuid.
 */
export async function insertEvents(
  client: ClickHouseClient,
  database: string,
  rows: readonly EventRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await client.insert({
    table: `${assertDatabaseName(database)}.${EVENTS_TABLE}`,
    values: rows as EventRow[],
    format: 'JSONEachRow',
    clickhouse_settings: INSERT_SETTINGS,
  });
}

export interface ReadEventsOptions {
  teamId: number;
  /** Deduplicated read (FINAL), the default; false shows the rows a merge has not collapsed yet. */
  final?: boolean;
  limit?: number;
}

/**
 * A project's events, oldest first. A plain helper for tests and tools: the event listing has its
 * own queries.
 */
export async function readEvents(
  client: ClickHouseClient,
  database: string,
  options: ReadEventsOptions,
): Promise<StoredEventRow[]> {
  const columns = EVENTS_TABLE_COLUMNS.map((column) => `\`${column}\``).join(', ');
  const result = await client.query({
    query: `SELECT ${columns} FROM ${assertDatabaseName(database)}.${EVENTS_TABLE}${options.final === false ? '' : ' FINAL'}
            WHERE team_id = {teamId:Int64}
            ORDER BY timestamp, uuid
            LIMIT {limit:UInt64}`,
    query_params: { teamId: options.teamId, limit: options.limit ?? 1_000_000 },
    format: 'JSONEachRow',
  });
  const rows = await result.json<Omit<StoredEventRow, 'team_id'> & { team_id: string }>();
  // team_id is a Postgres serial: converting it back to a number is exact.
  return rows.map((row) => ({ ...row, team_id: Number(row.team_id) }));
}

/**
 * ClickHouse errors that say a value of the inserted rows cannot be stored (bad escape, unparsable
 * date-time, UUID or number, a string too large): the same rows fail on every retry, so ingestion
 * isolates and dead-letters them instead of retrying the batch forever. Anything else (the server
 * unreachable, out of memory, a missing table or column) is transient or ours to fix, and retried.
 */
const ROW_CONTENT_ERRORS = new Set([
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_UUID',
  'CANNOT_PARSE_BOOL',
  'CANNOT_PARSE_IPV4',
  'CANNOT_PARSE_IPV6',
  'INCORRECT_DATA',
  'TOO_LARGE_STRING_SIZE',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  'ARGUMENT_OUT_OF_BOUND',
  'DECIMAL_OVERFLOW',
]);

/** The ClickHouse exception name when `error` is a refusal of the rows' content, else undefined. */
export function rowContentErrorName(error: unknown): string | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' && ROW_CONTENT_ERRORS.has(type) ? type : undefined;
}
