import { randomBytes, randomUUID } from 'node:crypto';
import { Client, type Pool } from 'pg';
import { createBatchExportDestinations } from '@hogbase/batch-exports';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { SecretBox } from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { insertProjectRows } from '@hogbase/test-support';
import { isPersonsCursor } from './persons-query.util';
import { executeRun, type RunExecutorDeps } from './run-executor.handler';
import { testRunExecutorDeps } from './testing/run-executor-test.util';

describe('a persons run: persons from Postgres to a Postgres table, not events', () => {
  let database: MigratedTestDatabase;
  let clickhouse: TestClickHouse;
  let pool: Pool;
  let admin: Client;
  let deps: RunExecutorDeps;
  let teamId: number;
  const secrets = new SecretBox([randomBytes(32)]);

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    admin = new Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('CREATE SCHEMA exports');
    ({ teamId } = await insertProjectRows(pool, 'Persons'));
    // The events table holds nothing: a run that read events would export nothing.
    clickhouse = await createTestClickHouse();
    deps = testRunExecutorDeps(pool, clickhouse, {
      secrets,
      // The destination is the test database's server, on loopback.
      destinations: createBatchExportDestinations({
        egress: new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }),
      }),
    });
  });

  afterAll(async () => {
    await admin?.end();
    await clickhouse?.drop();
    await database?.close();
  });

  /** A person with distinct ids, written as ingestion writes (the triggers stamp the change). */
  async function personWith(properties: Record<string, unknown>, ...distinctIds: string[]) {
    const { rows } = await pool.query<{ id: string; uuid: string }>(
      `INSERT INTO persons (uuid, team_id, properties, version) VALUES ($1, $2, $3, 1) RETURNING id, uuid`,
      [randomUUID(), teamId, JSON.stringify(properties)],
    );
    for (const distinctId of distinctIds) {
      await pool.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)`,
        [teamId, distinctId, rows[0].id],
      );
    }
    return rows[0];
  }

  async function createExport(): Promise<string> {
    const url = new URL(database.url);
    const config = {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: database.name,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      schema: 'exports',
      table_name: 'persons',
      // The machine's server has Debian's self-signed ("snakeoil") certificate.
      has_self_signed_cert: true,
    };
    const id = randomUUID();
    await pool.query(
      `INSERT INTO batch_exports (id, team_id, name, model, destination_type, destination_config, interval)
       VALUES ($1, $2, 'persons', 'persons', 'Postgres', $3, 'hour')`,
      [id, teamId, secrets.seal(JSON.stringify(config))],
    );
    return id;
  }

  async function createRun(exportId: string, start: Date | null, end: Date): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO batch_export_runs (id, batch_export_id, data_interval_start, data_interval_end, backfill_id)
       VALUES ($1, $2, $3, $4, NULL)`,
      [id, exportId, start, end],
    );
    return id;
  }

  async function runRow(runId: string) {
    const { rows } = await pool.query<{
      status: string;
      records_completed: number;
      records_total_count: number;
      cursor: string;
    }>('SELECT status, records_completed, records_total_count, cursor FROM batch_export_runs WHERE id = $1', [
      runId,
    ]);
    return rows[0];
  }

  async function exported() {
    const { rows } = await admin.query<{ distinct_id: string; person_id: string; properties: unknown }>(
      'SELECT distinct_id, person_id, properties FROM exports.persons ORDER BY distinct_id',
    );
    return rows.map((row) => [row.distinct_id, row.person_id, row.properties]);
  }

  it("exports the interval's persons, one row per distinct id, and a retry leaves one row each", async () => {
    const exportId = await createExport();
    const start = new Date(Date.now() - 1_000);
    const alice = await personWith({ email: 'alice@example.com' }, 'alice-web', 'alice-ios');
    const bob = await personWith({ email: 'bob@example.com' }, 'bob');
    const end = new Date(Date.now() + 1_000);

    const first = await createRun(exportId, start, end);
    const outcome = await executeRun(first, deps, new AbortController().signal);
    expect(outcome).toMatchObject({ status: 'Completed', records: 3 });
    const run = await runRow(first);
    expect(run).toMatchObject({ status: 'Completed', records_completed: 3, records_total_count: 3 });
    expect(isPersonsCursor(run.cursor)).toBe(true);
    expect(await exported()).toEqual([
      ['alice-ios', alice.uuid, { email: 'alice@example.com' }],
      ['alice-web', alice.uuid, { email: 'alice@example.com' }],
      ['bob', bob.uuid, { email: 'bob@example.com' }],
    ]);

    // A backfill of everything before the end runs the same rows again: still one row each.
    const again = await createRun(exportId, null, new Date(end.getTime() + 1));
    expect(await executeRun(again, deps, new AbortController().signal)).toMatchObject({
      status: 'Completed',
      records: 3,
    });
    expect(await exported()).toHaveLength(3);

    // A change to the person goes out with the run of the interval it happened in.
    const changedFrom = new Date(Date.now() - 1);
    await pool.query(
      `UPDATE persons SET properties = '{"plan":"pro"}', version = version + 1 WHERE id = $1`,
      [bob.id],
    );
    const next = await createRun(exportId, changedFrom, new Date(Date.now() + 1_000));
    expect(await executeRun(next, deps, new AbortController().signal)).toMatchObject({
      status: 'Completed',
      records: 1,
    });
    expect(await exported()).toContainEqual(['bob', bob.uuid, { plan: 'pro' }]);
  });
});
