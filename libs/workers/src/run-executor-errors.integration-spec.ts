import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createNoOpDestination, NonRetryableExportError } from '@hogbase/batch-exports';
import {
  closeClickHouse,
  createClickHouse,
  insertEvents,
  type EventRow,
  type QueryLimits,
} from '@hogbase/clickhouse';
import {
  createTestClickHouse,
  testClickHouseDataPath,
  type TestClickHouse,
} from '@hogbase/clickhouse/testing';
import { DEFAULT_BATCH_EXPORT_QUERY_LIMITS, SecretBox } from '@hogbase/config';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { insertProjectRows } from '@hogbase/test-support';
import { executeRun, type RunExecutorDeps } from './run-executor.handler';
import { testRunExecutorDeps } from './testing/run-executor-test.util';

const EVENTS = 1_000;

/** Ten columns of eight copies of the properties (~2 KB): ~160 KB a row, ~160 MB for the interval. */
const WIDE_QUERY = `SELECT ${Array.from(
  { length: 10 },
  (_, column) => `concat(${Array.from({ length: 8 }, () => 'properties').join(', ')}) AS wide_${column}`,
).join(', ')} FROM events`;

describe('what a failed run says: its queries within BATCH_EXPORT_QUERY_MAX_*, no secret in its error', () => {
  let database: MigratedTestDatabase;
  let clickhouse: TestClickHouse;
  let pool: Pool;
  let teamId: number;
  const secrets = new SecretBox([randomBytes(32)]);
  const openClients: RunExecutorDeps['clickhouse'][] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    ({ teamId } = await insertProjectRows(pool, 'Limits'));
    clickhouse = await createTestClickHouse();
    const properties = JSON.stringify({ text: randomBytes(1_000).toString('hex') });
    const rows: EventRow[] = Array.from({ length: EVENTS }, (_, index) => {
      const timestamp = `2026-01-05 10:${String(Math.floor(index / 20)).padStart(2, '0')}:00.000000`;
      return {
        uuid: randomUUID(),
        event: 'signed up',
        properties,
        timestamp,
        team_id: teamId,
        distinct_id: `user-${index}`,
        created_at: timestamp,
        person_id: randomUUID(),
      };
    });
    await insertEvents(clickhouse.client, clickhouse.database, rows);
  });

  afterAll(async () => {
    for (const client of openClients) await closeClickHouse(client);
    await clickhouse?.drop();
    await database?.close();
  });

  /**
   * The workers' deps with these limits, on a ClickHouse client of their own: chDB keeps a query's
   * settings in its client's session, which the fixtures' client must not inherit.
   */
  function depsWith(limits: QueryLimits): RunExecutorDeps {
    const client = createClickHouse({ database: clickhouse.database, dataPath: testClickHouseDataPath() });
    openClients.push(client);
    return testRunExecutorDeps(pool, clickhouse, {
      clickhouse: client,
      secrets,
      destinations: { NoOp: createNoOpDestination },
      queryLimits: limits,
    });
  }

  /** An export of the events (NoOp, with this hogql_query) and a run of 10:00-11:00. */
  async function runOf(
    hogqlQuery: string | null,
    destination: { type: string; config: Record<string, unknown> } = { type: 'NoOp', config: {} },
  ): Promise<string> {
    const exportId = randomUUID();
    await pool.query(
      `INSERT INTO batch_exports (id, team_id, name, model, destination_type, destination_config, interval, hogql_query, schema)
       VALUES ($1, $2, 'limits', 'events', $6, $3, 'hour', $4, $5)`,
      [
        exportId,
        teamId,
        secrets.seal(JSON.stringify(destination.config)),
        hogqlQuery,
        hogqlQuery === null ? null : JSON.stringify({ hogql_query: hogqlQuery }),
        destination.type,
      ],
    );
    const runId = randomUUID();
    await pool.query(
      `INSERT INTO batch_export_runs (id, batch_export_id, data_interval_start, data_interval_end, backfill_id)
       VALUES ($1, $2, $3, $4, NULL)`,
      [runId, exportId, new Date('2026-01-05T10:00:00Z'), new Date('2026-01-05T11:00:00Z')],
    );
    return runId;
  }

  async function runRow(runId: string) {
    const { rows } = await pool.query<{
      status: string;
      latest_error: string | null;
      records_completed: number;
    }>('SELECT status, latest_error, records_completed FROM batch_export_runs WHERE id = $1', [runId]);
    return rows[0];
  }

  /** ClickHouse's own text: the generated SQL, the exception's class, the engine's version. */
  function expectNoEngineText(message: string | null): void {
    for (const internal of ['DB::Exception', 'Code:', 'SELECT', 'version', 'MiB', 'test_clickhouse_']) {
      expect(message).not.toContain(internal);
    }
  }

  it('fails a run whose hogql_query needs more memory than the limit, with a clear error, and then runs a normal export', async () => {
    const deps = depsWith({ ...DEFAULT_BATCH_EXPORT_QUERY_LIMITS, maxMemoryBytes: 48 * 1024 * 1024 });

    const wide = await runOf(WIDE_QUERY);
    const outcome = await executeRun(wide, deps, new AbortController().signal);
    const message =
      "The export's query needed more memory than a batch-export query may use (BATCH_EXPORT_QUERY_MAX_MEMORY_BYTES): export fewer or smaller columns, or use a shorter interval.";
    expect(outcome).toEqual({ status: 'Failed', error: message });
    expect(await runRow(wide)).toEqual({ status: 'Failed', latest_error: message, records_completed: 0 });
    expectNoEngineText(message);

    // The same limits, the same client: an export of the default fields completes.
    const normal = await runOf(null);
    expect(await executeRun(normal, deps, new AbortController().signal)).toMatchObject({
      status: 'Completed',
      records: EVENTS,
    });
    expect(await runRow(normal)).toEqual({
      status: 'Completed',
      latest_error: null,
      records_completed: EVENTS,
    });
  });

  it('fails a run whose result is larger than the result limit, and takes it under the default one', async () => {
    const small = depsWith({ ...DEFAULT_BATCH_EXPORT_QUERY_LIMITS, maxResultBytes: 256 * 1024 });
    const refused = await runOf(null);
    const outcome = await executeRun(refused, small, new AbortController().signal);
    expect(outcome).toEqual({
      status: 'Failed',
      error:
        "The export's query returned more data than a batch-export query may (BATCH_EXPORT_QUERY_MAX_RESULT_BYTES): export fewer or smaller columns, set max_file_size_mb (S3), or use a shorter interval.",
    });
    expect((await runRow(refused)).status).toBe('Failed');

    const taken = await runOf(null);
    const defaults = depsWith(DEFAULT_BATCH_EXPORT_QUERY_LIMITS);
    expect(await executeRun(taken, defaults, new AbortController().signal)).toMatchObject({
      status: 'Completed',
      records: EVENTS,
    });
  });

  it("leaves the destination's secrets out of the run's error and logs", async () => {
    const config = { host: 'db.example.com', user: 'exporter', password: 'pg-very-secret' };
    const deps = {
      ...depsWith(DEFAULT_BATCH_EXPORT_QUERY_LIMITS),
      destinations: {
        // As a destination may word it: what it was given, quoted back.
        Postgres: () => {
          throw new NonRetryableExportError(
            'password authentication failed for user "exporter" (pg-very-secret)',
          );
        },
      },
    };
    const runId = await runOf(null, { type: 'Postgres', config });
    const redacted = 'password authentication failed for user "***" (***)';
    expect(await executeRun(runId, deps, new AbortController().signal)).toEqual({
      status: 'Failed',
      error: redacted,
    });
    expect((await runRow(runId)).latest_error).toBe(redacted);
    const { rows } = await pool.query<{ message: string }>(
      `SELECT message FROM batch_export_log_entries WHERE run_id = $1`,
      [runId],
    );
    expect(rows.map((row) => row.message)).toEqual([`Run failed: ${redacted}`]);
  });
});
