import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Pool } from 'pg';
import { createTestDatabase, withDeadline, type TestDatabase } from '@hogbase/test-support';
import { openDataSource, postgresPoolTimeouts, type PostgresTimeouts } from './data-source.util';
import type { EmbeddedPostgres } from './embedded-postgres.server';
import { MIGRATION_LOCK_KEY } from './migration-runner.util';
import { startTemporaryEmbeddedPostgres, timeouts } from './testing/test-postgres.util';

function boundedPool(url: string, overrides: Partial<PostgresTimeouts>): Pool {
  const pool = new Pool({ connectionString: url, max: 2, ...postgresPoolTimeouts(timeouts(overrides)) });
  pool.on('error', () => undefined);
  return pool;
}

describe('the Postgres timeouts, on the machine’s PostgreSQL', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('puts the named bounds on every connection a data source opens', async () => {
    const dataSource = await openDataSource({ url: database.url });
    try {
      const [settings] = await dataSource.query<Record<string, string>[]>(
        `SELECT current_setting('statement_timeout') AS statement,
                current_setting('lock_timeout') AS lock,
                current_setting('idle_in_transaction_session_timeout') AS idle`,
      );
      expect(settings).toEqual({ statement: '30s', lock: '10s', idle: '1min' });
    } finally {
      await dataSource.destroy();
    }
  });

  it('cancels a statement that runs past statement_timeout', async () => {
    const pool = boundedPool(database.url, { statementTimeoutMs: 300 });
    try {
      await expect(withDeadline(pool.query('SELECT pg_sleep(5)'), 'pg_sleep')).rejects.toMatchObject({
        code: '57014',
        message: 'canceling statement due to statement timeout',
      });
      await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await pool.end();
    }
  });

  it('fails a statement that waits past lock_timeout for a row another transaction holds', async () => {
    const holder = new Client({ connectionString: database.url });
    const pool = boundedPool(database.url, { lockTimeoutMs: 300 });
    await holder.connect();
    try {
      await holder.query('CREATE TABLE IF NOT EXISTS lock_probe (id int PRIMARY KEY, value int)');
      await holder.query('INSERT INTO lock_probe VALUES (1, 0) ON CONFLICT DO NOTHING');
      await holder.query('BEGIN');
      await holder.query('UPDATE lock_probe SET value = value + 1 WHERE id = 1');
      await expect(
        withDeadline(pool.query('UPDATE lock_probe SET value = 0 WHERE id = 1'), 'locked update'),
      ).rejects.toMatchObject({ code: '55P03', message: 'canceling statement due to lock timeout' });
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
      await pool.end();
    }
  });

  it('ends a session left idle in a transaction past idle_in_transaction_session_timeout', async () => {
    const pool = boundedPool(database.url, { idleInTransactionTimeoutMs: 300 });
    const client = await pool.connect();
    // The server closes the session; pg reports it on the client, which must not crash the test.
    client.on('error', () => undefined);
    let broken = false;
    try {
      await client.query('BEGIN');
      await sleep(1_000);
      await expect(withDeadline(client.query('SELECT 1'), 'query after idling')).rejects.toThrow();
      broken = true;
    } finally {
      client.release(broken);
      await pool.end();
    }
  });

  it('lets migrations wait for another process’s migrations however short the timeouts are', async () => {
    const other = new Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const opening = openDataSource({
        url: database.url,
        timeouts: timeouts({ statementTimeoutMs: 200, lockTimeoutMs: 200, queryTimeoutMs: 300 }),
      });
      // Held past every bound: the migrations must still be waiting, not failed.
      await sleep(1_000);
      await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      const dataSource = await withDeadline(opening, 'migrations after the lock was released');
      await dataSource.destroy();
    } finally {
      await other.end();
    }
  });
});

describe('the Postgres timeouts, on the embedded Postgres', () => {
  let embedded: EmbeddedPostgres;

  beforeAll(async () => {
    embedded = await startTemporaryEmbeddedPostgres('hogbase-timeouts-test-');
  });

  afterAll(async () => {
    await embedded?.stop();
  });

  /**
   * Opens a transaction on a connection of its own (the embedded engine then serves that one
   * alone), expects `SELECT 2` through `pool` to fail with `failure`, ends the transaction, and
   * expects the pool to answer again.
   */
  async function expectFailureBehindTransaction(pool: Pool, what: string, failure: string): Promise<void> {
    const holder = new Client({ connectionString: embedded.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await expect(withDeadline(pool.query('SELECT 2 AS two'), what)).rejects.toThrow(failure);
      await holder.query('ROLLBACK');
      await expect(withDeadline(pool.query('SELECT 3 AS three'), 'next query')).resolves.toMatchObject({
        rows: [{ three: 3 }],
      });
    } finally {
      await holder.end();
    }
  }

  it('fails a pool query queued behind another connection’s transaction at query_timeout, and the pool recovers', async () => {
    const pool = boundedPool(embedded.url, { queryTimeoutMs: 500 });
    try {
      // Both pool connections are opened first, so the query below waits on the engine itself.
      await Promise.all([pool.query('SELECT pg_sleep(0.05)'), pool.query('SELECT pg_sleep(0.05)')]);
      await expectFailureBehindTransaction(pool, 'queued query', 'Query read timeout');
    } finally {
      await pool.end();
    }
  });

  it('fails a new connection that waits behind another connection’s transaction at connectionTimeoutMillis', async () => {
    const pool = boundedPool(embedded.url, { connectionTimeoutMs: 500 });
    try {
      // Even the start-up message of a connection waits for the transaction to end.
      await expectFailureBehindTransaction(
        pool,
        'connecting',
        'Connection terminated due to connection timeout',
      );
    } finally {
      await pool.end();
    }
  });

  it('ignores the server-side timeouts sent at connection, which keeps it serving', async () => {
    // NOTE: a `SET idle_in_transaction_session_timeout` leaves PGlite unable to answer again. The
    // same value sent as a startup parameter must stay inert, or every pool would hang the engine.
    const pool = boundedPool(embedded.url, { statementTimeoutMs: 200, idleInTransactionTimeoutMs: 200 });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await sleep(600);
      await expect(
        withDeadline(client.query('SELECT 1 AS one'), 'query after idling'),
      ).resolves.toMatchObject({
        rows: [{ one: 1 }],
      });
      await client.query('ROLLBACK');
      // statement_timeout does not fire either: only the client-side bound stops a slow statement.
      await expect(withDeadline(client.query('SELECT pg_sleep(0.5)'), 'pg_sleep')).resolves.toBeDefined();
    } finally {
      client.release();
      await pool.end();
    }
  });
});
