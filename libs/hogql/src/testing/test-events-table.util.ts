import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, type ClickHouseClient, type ClickHouseClientConfigOptions } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';

/**
 * A chDB engine with a database holding an events table shaped like the real one (see
 * libs/clickhouse/migrations), for running compiled SQL in tests. Test-only.
 */
export interface TestEventsTable {
  client: ClickHouseClient;
  /** `<database>.events`. */
  table: string;
  insert(rows: TestEventRow[]): Promise<void>;
  /** Runs a query and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  drop(): Promise<void>;
}

export interface TestEventRow {
  uuid: string;
  event: string;
  distinct_id: string;
  team_id: number;
  properties?: Record<string, unknown> | string;
  person_properties?: Record<string, unknown>;
  timestamp?: string;
  person_id?: string;
  elements_chain?: string;
}

/** Refuses any database whose name does not contain `test`. */
function assertTestDatabase(name: string): void {
  if (!/^[a-z0-9_]+$/.test(name) || !name.includes('test')) {
    throw new Error(`Refusing to use ClickHouse database "${name}" in a test`);
  }
}

const DATA_PATH_PREFIX = 'hogql-chdb-';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** chDB holds its data path until the process exits; remove those of test processes that are gone. */
function removeStaleDataPaths(): void {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(DATA_PATH_PREFIX)) continue;
    const pid = Number(entry.slice(DATA_PATH_PREFIX.length));
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    rmSync(path.join(tmpdir(), entry), { recursive: true, force: true });
  }
}

export interface TestEventsTableOptions {
  /** The real table's engine and key (ReplacingMergeTree), which reads with FINAL need. */
  replacing?: boolean;
}

export async function createTestEventsTable(options: TestEventsTableOptions = {}): Promise<TestEventsTable> {
  removeStaleDataPaths();
  const database = `hogql_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  assertTestDatabase(database);
  const connection = createChdbConnection({
    path: path.join(tmpdir(), `${DATA_PATH_PREFIX}${process.pid}`),
  });
  const client = createClient({
    // NOTE: chdb/connection implements @clickhouse/client-common's Connection; the client vendors
    // its own copy of those types, so the compiler sees two unrelated types.
    connection: connection as unknown as ClickHouseClientConfigOptions['connection'],
    clickhouse_settings: { async_insert: 0, output_format_json_quote_64bit_integers: 0 },
  });
  const table = `${database}.events`;
  await client.command({ query: `CREATE DATABASE ${database}` });
  await client.command({
    query: `CREATE TABLE ${table} (
      uuid UUID,
      event String,
      properties String,
      timestamp DateTime64(6, 'UTC'),
      team_id Int64,
      distinct_id String,
      elements_chain String DEFAULT '',
      created_at DateTime64(6, 'UTC'),
      person_id UUID,
      person_properties String DEFAULT '{}',
      person_created_at DateTime64(3, 'UTC'),
      \`$group_0\` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_0'), '^"|"$', ''),
      \`$group_1\` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_1'), '^"|"$', ''),
      \`$group_2\` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_2'), '^"|"$', ''),
      \`$group_3\` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_3'), '^"|"$', ''),
      \`$group_4\` String DEFAULT replaceRegexpAll(JSONExtractRaw(properties, '$group_4'), '^"|"$', ''),
      _timestamp DateTime('UTC') DEFAULT now(),
      _offset UInt64 DEFAULT 0
    ) ENGINE = ${
      options.replacing
        ? 'ReplacingMergeTree(_timestamp) PARTITION BY toYYYYMM(timestamp) ORDER BY (team_id, toDate(timestamp), uuid)'
        : 'MergeTree ORDER BY (team_id, uuid)'
    }`,
  });
  let dropped = false;
  return {
    client,
    table,
    async insert(rows) {
      await client.insert({
        table,
        format: 'JSONEachRow',
        values: rows.map((row) => ({
          uuid: row.uuid,
          event: row.event,
          distinct_id: row.distinct_id,
          team_id: row.team_id,
          properties:
            typeof row.properties === 'string' ? row.properties : JSON.stringify(row.properties ?? {}),
          person_properties: JSON.stringify(row.person_properties ?? {}),
          timestamp: row.timestamp ?? '2024-01-10 12:00:00.000000',
          created_at: row.timestamp ?? '2024-01-10 12:00:00.000000',
          person_id: row.person_id ?? '00000000-0000-0000-0000-000000000000',
          person_created_at: '2023-12-01 00:00:00.000',
          elements_chain: row.elements_chain ?? '',
        })),
      });
    },
    async query<T>(sql: string, params: Record<string, unknown> = {}) {
      const result = await client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return result.json<T>();
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      assertTestDatabase(database);
      await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
      await client.close();
    },
  };
}
