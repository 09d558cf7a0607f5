import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import type { CapturedEvent } from '@hogbase/event-contract';
import {
  captured,
  countRows,
  createIngestionTestDatabase,
  IngestionTestDatabase,
} from '../testing/ingestion-test.util';
import { PersonProcessor } from './person-processor.service';

const DEADLINE_MS = 20_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `condition()` holds; rejects with `what` after the deadline. */
async function waitFor<T>(what: string, condition: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await condition();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * What the Kafka consumer does with a batch whose handler throws: the same batch again after a
 * pause, until it goes through. Returns the failures seen on the way.
 */
async function processUntilDone(processor: PersonProcessor, batch: CapturedEvent[]): Promise<unknown[]> {
  const failures: unknown[] = [];
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    try {
      await processor.processBatch(batch);
      return failures;
    } catch (error) {
      failures.push(error);
      if (Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

/**
 * Postgres going away under a batch: the processor's session terminated mid-transaction, and its
 * role refused at login for a while. The process must live on, the batch must fail as a transient
 * error and then go through once Postgres is back, and the persons must be written exactly once.
 *
 * NOTE: an 'error' event nobody listens to (what killed ingestion) is an uncaught exception, and
 * Jest fails the running test with "Unhandled error" on one: no listener of our own is needed.
 */
describe('PersonProcessor when Postgres drops or refuses its connections', () => {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const role = `hogbase_test_outage_${suffix}`;
  const applicationName = `ingestion-outage-${suffix}`;
  let db: IngestionTestDatabase;
  let admin: Client;
  let pool: Pool;
  let processor: PersonProcessor;

  beforeAll(async () => {
    db = await createIngestionTestDatabase();
    admin = new Client({ connectionString: db.database.url });
    await admin.connect();
    const password = randomBytes(12).toString('hex');
    // A role of its own: turning LOGIN off must not lock out the test's superuser.
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`);
    await admin.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    const url = new URL(db.database.url);
    url.username = role;
    url.password = password;
    pool = new Pool({
      connectionString: url.toString(),
      max: 2,
      application_name: applicationName,
      connectionTimeoutMillis: 5_000,
    });
    // As every main does: an idle client that loses its connection is reported on the pool.
    pool.on('error', () => undefined);
    processor = new PersonProcessor(pool);
  });

  afterAll(async () => {
    await pool?.end().catch(() => undefined);
    if (admin) {
      await admin.query(`ALTER ROLE ${role} LOGIN`).catch(() => undefined);
      // Before the drop, which terminates every session on the database.
      await admin.end().catch(() => undefined);
      await db.close();
      const server = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await server.connect();
      await server.query(`DROP ROLE IF EXISTS ${role}`);
      await server.end();
    }
  });

  function batchFor(teamId: number): CapturedEvent[] {
    return Array.from({ length: 10 }, (_, index) =>
      captured(teamId, `user-${index}`, '$identify', { properties: { $set: { plan: 'pro', index } } }),
    );
  }

  /** The processor's sessions, as Postgres lists them. */
  async function processorPids(state?: 'active'): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND ($2::text IS NULL OR state = $2)`,
      [applicationName, state ?? null],
    );
    return rows.map((row) => row.pid);
  }

  /** Holds a lock the batch's first statement waits for, so that the batch is in flight. */
  async function blockTeam(teamId: number): Promise<Client> {
    const blocker = new Client({ connectionString: db.database.url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM teams WHERE id = $1 FOR UPDATE', [teamId]);
    return blocker;
  }

  it('fails the batch in flight when its session is terminated, keeps running, then writes it once', async () => {
    const teamId = await db.createTeam();
    const batch = batchFor(teamId);
    const blocker = await blockTeam(teamId);
    const inFlight = processor.processBatch(batch).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    const [pid] = await waitFor('the batch to wait on its lock', async () => {
      const pids = await processorPids('active');
      return pids.length > 0 ? pids : undefined;
    });
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    const outcome = await inFlight;
    await blocker.query('ROLLBACK');
    await blocker.end();

    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/terminat/i);

    // At the first try: no broken client was handed back out of the pool.
    await processor.processBatch(batch);
    // Delivered again (the consumer had not committed the failed attempt): still one of each.
    await processor.processBatch(batch);
    expect(await countRows(db.pool, 'persons', teamId)).toBe(10);
    expect(await countRows(db.pool, 'person_distinct_ids', teamId)).toBe(10);
  });

  it('retries a batch while its role may not log in, and writes it once LOGIN is back', async () => {
    const teamId = await db.createTeam();
    const batch = batchFor(teamId);
    const blocker = await blockTeam(teamId);
    const attempts = processUntilDone(processor, batch);
    await waitFor('the batch to wait on its lock', async () => {
      const pids = await processorPids('active');
      return pids.length > 0 ? pids : undefined;
    });

    await admin.query(`ALTER ROLE ${role} NOLOGIN`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
    await blocker.query('ROLLBACK');
    await blocker.end();
    // Let the retries meet the refused logins for a while.
    await waitFor('the processor to be refused at login', async () =>
      (await processorPids()).length === 0 ? true : undefined,
    );
    await sleep(1_000);
    await admin.query(`ALTER ROLE ${role} LOGIN`);

    const failures = await attempts;
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures.map((failure) => (failure as Error).message).join('\n')).toMatch(
      /not permitted to log in/,
    );
    await processor.processBatch(batch);
    expect(await countRows(db.pool, 'persons', teamId)).toBe(10);
    expect(await countRows(db.pool, 'person_distinct_ids', teamId)).toBe(10);
  });
});
