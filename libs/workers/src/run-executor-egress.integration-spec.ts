import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { createBatchExportDestinations, MAX_DESTINATION_ERROR_CHARS } from '@hogbase/batch-exports';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { SecretBox } from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { insertProjectRows } from '@hogbase/test-support';
import { executeRun, type RunExecutorDeps } from './run-executor.handler';
import { testRunExecutorDeps } from './testing/run-executor-test.util';

/** What an internal service answers: it must never show up in a run's error. */
const INTERNAL_ANSWER = 'INTERNAL-ADMIN-PAGE ';

/**
 * A run's destination on the server's own network: the run fails with the egress refusal in
 * `latest_error`, never with what the internal service answered (a port oracle, a data leak).
 */
describe('a run whose destination is on the server’s own network', () => {
  let database: MigratedTestDatabase;
  let clickhouse: TestClickHouse;
  let pool: Pool;
  let internal: Server;
  let internalUrl: string;
  let internalRequests = 0;
  let teamId: number;
  const secrets = new SecretBox([randomBytes(32)]);

  function deps(egress: EgressPolicy): RunExecutorDeps {
    return testRunExecutorDeps(pool, clickhouse, {
      secrets,
      destinations: createBatchExportDestinations({ egress }),
    });
  }

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    ({ teamId } = await insertProjectRows(pool, 'Egress'));
    // One person for the runs to export (persons come from Postgres: no event needed).
    const person = await pool.query<{ id: string }>(
      `INSERT INTO persons (uuid, team_id, properties, version) VALUES ($1, $2, '{}', 1) RETURNING id`,
      [randomUUID(), teamId],
    );
    await pool.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'someone', $2)`,
      [teamId, person.rows[0].id],
    );
    clickhouse = await createTestClickHouse();
    internal = createServer((_request, response) => {
      internalRequests += 1;
      response.writeHead(403, { 'Content-Type': 'application/xml' });
      response.end(
        `<Error><Code>AccessDenied</Code><Message>${INTERNAL_ANSWER.repeat(20_000)}</Message></Error>`,
      );
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    internal?.closeAllConnections();
    await new Promise<void>((resolve) => (internal ? internal.close(() => resolve()) : resolve()));
    await clickhouse?.drop();
    await database?.close();
  });

  async function runTo(type: string, config: Record<string, unknown>, egress: EgressPolicy) {
    const exportId = randomUUID();
    await pool.query(
      `INSERT INTO batch_exports (id, team_id, name, model, destination_type, destination_config, interval)
       VALUES ($1, $2, 'internal', 'persons', $3, $4, 'hour')`,
      [exportId, teamId, type, secrets.seal(JSON.stringify(config))],
    );
    const runId = randomUUID();
    await pool.query(
      `INSERT INTO batch_export_runs (id, batch_export_id, data_interval_start, data_interval_end, backfill_id)
       VALUES ($1, $2, NULL, $3, NULL)`,
      [runId, exportId, new Date(Date.now() + 60_000)],
    );
    const outcome = await executeRun(runId, deps(egress), new AbortController().signal);
    const { rows } = await pool.query<{ status: string; latest_error: string | null }>(
      'SELECT status, latest_error FROM batch_export_runs WHERE id = $1',
      [runId],
    );
    return { outcome, run: rows[0] };
  }

  const s3Config = (endpoint: string) => ({
    bucket_name: 'exports',
    endpoint_url: endpoint,
    aws_access_key_id: 'key',
    aws_secret_access_key: 'secret',
  });

  it('fails an S3 run to a loopback endpoint with the refusal, nothing sent', async () => {
    internalRequests = 0;
    const { run } = await runTo('S3', s3Config(internalUrl), EgressPolicy.strict());
    expect(run).toEqual({
      status: 'Failed',
      latest_error: expect.stringContaining(
        '127.0.0.1 resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it',
      ),
    });
    expect(run.latest_error).not.toContain(INTERNAL_ANSWER);
    expect(internalRequests).toBe(0);
  });

  it('fails a Postgres run whose host is a socket directory, nothing opened', async () => {
    const { run } = await runTo(
      'Postgres',
      { host: '/var/run/postgresql', port: 5432, database: 'postgres', user: 'reader', table_name: 'stolen' },
      new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }),
    );
    expect(run).toEqual({
      status: 'Failed',
      latest_error:
        'Postgres destination: "/var/run/postgresql" is not a network host: socket paths are refused',
    });
  });

  it('keeps only a bounded part of what a reachable (allowed) server answered', async () => {
    const { run } = await runTo(
      'S3',
      s3Config(internalUrl),
      new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }),
    );
    expect(run.status).toBe('Failed');
    expect(run.latest_error?.length).toBeLessThan(MAX_DESTINATION_ERROR_CHARS + 40);
  });

  it("fails the run of an S3 export saved without keys instead of lending it the server's AWS identity, nothing sent", async () => {
    // The server's own identity, where the SDK's default chain looks first.
    const saved = [process.env.AWS_ACCESS_KEY_ID, process.env.AWS_SECRET_ACCESS_KEY];
    process.env.AWS_ACCESS_KEY_ID = 'AKIASERVERIDENTITY';
    process.env.AWS_SECRET_ACCESS_KEY = 'server-secret';
    try {
      internalRequests = 0;
      const { aws_access_key_id: _id, aws_secret_access_key: _secret, ...keyless } = s3Config(internalUrl);
      const { run } = await runTo(
        'S3',
        keyless,
        new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }),
      );
      expect(run).toEqual({
        status: 'Failed',
        latest_error: expect.stringContaining(
          'this server does not lend its own AWS credentials to exports (BATCH_EXPORT_S3_SERVER_CREDENTIALS is off)',
        ),
      });
      expect(internalRequests).toBe(0);
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved[0]],
        ['AWS_SECRET_ACCESS_KEY', saved[1]],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
