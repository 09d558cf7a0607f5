import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { EVENTS_TABLE, EVENTS_TABLE_COLUMNS, type EventRow, type StoredEventRow } from './event-row';
import { eventRowsAsTsv } from './events-tsv.util';
import { assertDatabaseName } from './sql-identifier.util';

const INSERT_SETTINGS: ClickHouseSettings = {
  // Written when the insert returns: ingestion commits Kafka offsets right after it.
  async_insert: 0,
  // On a cluster `events` is a Distributed table; write through to the shards before returning
  // instead of leaving the rows in the initiating node's send queue.
  insert_distributed_sync: 1,
  // The first line is always a row: never taken for a header of column names and skipped.
  input_format_tsv_detect_header: 0,
};

/** chDB's raw insert, where the body's first row names its columns. */
const EMBEDDED_INSERT_SETTINGS = {
  async_insert: 0,
  // The columns by the names in the first row, and a name the table does not have is an error.
  input_format_with_names_use_header: 1,
  input_format_skip_unknown_fields: 0,
};

/**
 * Writes batches of rows to one database's events table, each batch in one INSERT (TabSeparated:
 * eventRowsAsTsv), so a batch is one part, not one part per event; rows that leave out different
 * optional columns go in one INSERT per set of columns. Writing rows again is harmless: the table
 * collapses rows with the same team, day and uuid. Made by openClickHouse for the engine it
 * opened (OpenedClickHouse.events).
 */
export interface EventsWriter {
  insert(rows: readonly EventRow[]): Promise<void>;
}

/** chDB's raw insert: the body as a `Buffer`, the settings in the statement. */
export type EmbeddedRawInsert = (params: {
  table: string;
  values: Buffer;
  format: 'TabSeparatedWithNames';
  settings: Record<string, number>;
}) => Promise<void>;

/** Through `@clickhouse/client`'s insert: what a ClickHouse server gets, and any client can do. */
export function clientEventsWriter(client: ClickHouseClient, database: string): EventsWriter {
  const table = `${assertDatabaseName(database)}.${EVENTS_TABLE}`;
  return {
    async insert(rows) {
      for (const { columns, body } of eventRowsAsTsv(rows)) {
        await client.insert({
          table,
          // Backquoted: `$group_0` is not a bare identifier.
          columns: columns.map((column) => `\`${column}\``) as [string, ...string[]],
          values: Readable.from([body], { objectMode: false, encoding: 'utf8' }),
          format: 'TabSeparated',
          clickhouse_settings: INSERT_SETTINGS,
        });
      }
    },
  };
}

/**
 * Through chDB's raw insert, on the embedded engine: its `@clickhouse/client` connection would
 * join the body to the statement as one string and send each setting as a `SET` of its own.
 */
export function embeddedEventsWriter(rawInsert: EmbeddedRawInsert, database: string): EventsWriter {
  const table = `${assertDatabaseName(database)}.${EVENTS_TABLE}`;
  return {
    async insert(rows) {
      for (const { columns, body } of eventRowsAsTsv(rows)) {
        // The columns as the body's first row: the raw insert's column list takes only names of
        // letters, digits and underscores, and `$group_0` is not one.
        await rawInsert({
          table,
          values: Buffer.from(`${columns.join('\t')}\n${body}`),
          format: 'TabSeparatedWithNames',
          settings: EMBEDDED_INSERT_SETTINGS,
        });
      }
    },
  };
}

/**
 * clientEventsWriter's insert, for tests and tools that put rows in place; ingestion writes
 * through the writer its engine was opened with.
 */
export function insertEvents(
  client: ClickHouseClient,
  database: string,
  rows: readonly EventRow[],
): Promise<void> {
  return clientEventsWriter(client, database).insert(rows);
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
