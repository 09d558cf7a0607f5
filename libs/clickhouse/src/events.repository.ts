import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { EVENTS_TABLE, EVENTS_TABLE_COLUMNS, type EventRow, type StoredEventRow } from './event-row.types';
import { eventRowsAsTsv } from './events-tsv.util';
import { assertDatabaseName } from './sql-identifier.util';

const INSERT_SETTINGS: ClickHouseSettings = {
  // Written when the insert returns: ingestion commits offsets right after it.
  async_insert: 0,
  // Through to the shards of a Distributed table before returning, not left in a send queue.
  insert_distributed_sync: 1,
  // The first line is always a row, never taken for a header.
  input_format_tsv_detect_header: 0,
};

const EMBEDDED_INSERT_SETTINGS = {
  async_insert: 0,
  input_format_with_names_use_header: 1,
  input_format_skip_unknown_fields: 0,
};

export interface EventsWriter {
  insert(rows: readonly EventRow[]): Promise<void>;
}

export type EmbeddedRawInsert = (params: {
  table: string;
  values: Buffer;
  format: 'TabSeparatedWithNames';
  settings: Record<string, number>;
}) => Promise<void>;

export function clientEventsWriter(client: ClickHouseClient, database: string): EventsWriter {
  const table = `${assertDatabaseName(database)}.${EVENTS_TABLE}`;
  return {
    async insert(rows) {
      for (const { columns, body } of eventRowsAsTsv(rows)) {
        await client.insert({
          table,
          columns: columns.map((column) => `\`${column}\``) as [string, ...string[]],
          values: Readable.from([body], { objectMode: false, encoding: 'utf8' }),
          format: 'TabSeparated',
          clickhouse_settings: INSERT_SETTINGS,
        });
      }
    },
  };
}

/** chDB's `@clickhouse/client` connection would join the body to the statement and SET each setting apart. */
export function embeddedEventsWriter(rawInsert: EmbeddedRawInsert, database: string): EventsWriter {
  const table = `${assertDatabaseName(database)}.${EVENTS_TABLE}`;
  return {
    async insert(rows) {
      for (const { columns, body } of eventRowsAsTsv(rows)) {
        // The columns as the first row: the raw insert's column list refuses names like `$group_0`.
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

export function insertEvents(
  client: ClickHouseClient,
  database: string,
  rows: readonly EventRow[],
): Promise<void> {
  return clientEventsWriter(client, database).insert(rows);
}

export interface ReadEventsOptions {
  teamId: number;
  /** False shows the rows a merge has not collapsed yet. */
  final?: boolean;
  limit?: number;
}

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
  return rows.map((row) => ({ ...row, team_id: Number(row.team_id) }));
}

// A value of the rows cannot be stored, so the same rows would fail every retry: ingestion dead-letters
// them. Anything else (unreachable, out of memory, a missing column) is transient or ours, and retried.
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

export function rowContentErrorName(error: unknown): string | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' && ROW_CONTENT_ERRORS.has(type) ? type : undefined;
}
