import type { DataSource } from 'typeorm';
import { createTestDatabase, withDeadline, type TestDatabase } from '@hogbase/test-support';
import { CrossConnectionQueryError, PostgresQueryTimeoutError } from './connection-guard.util';
import { openDataSource, type PostgresTimeouts } from './data-source.util';
import type { EmbeddedPostgres } from './embedded-postgres.server';
import { Team } from './entities';
import { startTemporaryEmbeddedPostgres, timeouts } from './testing/test-postgres.util';

describe('the connection guard, on the machine’s PostgreSQL', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDataSource({ url: database.url, poolSize: 4 });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('refuses a query on another connection while the request holds a transaction, and serves the transaction’s own', async () => {
    const outcomes = await dataSource.transaction(async (manager) => {
      const own = await manager.query<{ one: number }[]>('SELECT 1 AS one');
      const results = await Promise.allSettled([
        dataSource.query('SELECT 1'),
        dataSource.getRepository(Team).find(),
        dataSource.manager.findOneBy(Team, { id: 1 }),
        dataSource.transaction((nested) => nested.query('SELECT 1')),
      ]);
      return { own, refused: results.map((result) => result.status === 'rejected' && result.reason) };
    });
    expect(outcomes.own).toEqual([{ one: 1 }]);
    expect(outcomes.refused).toEqual([
      expect.any(CrossConnectionQueryError),
      expect.any(CrossConnectionQueryError),
      expect.any(CrossConnectionQueryError),
      expect.any(CrossConnectionQueryError),
    ]);
    // Once the transaction ended the same code path is fine again.
    await expect(dataSource.query('SELECT 2 AS two')).resolves.toEqual([{ two: 2 }]);
  });

  it('rolls the transaction back when a refused query fails it', async () => {
    const name = `guarded-${Date.now()}`;
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO organizations (id, name, slug) VALUES (gen_random_uuid(), $1, $1)`, [
          name,
        ]);
        await dataSource.query('SELECT 1');
      }),
    ).rejects.toThrow(CrossConnectionQueryError);
    await expect(
      dataSource.query('SELECT count(*)::int AS n FROM organizations WHERE name = $1', [name]),
    ).resolves.toEqual([{ n: 0 }]);
  });

  it('lets other requests use their own connections while one holds a transaction', async () => {
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const transaction = dataSource.transaction(async (manager) => {
      await manager.query('SELECT 1');
      await held;
      return manager.query<{ done: boolean }[]>('SELECT true AS done');
    });
    await expect(dataSource.query('SELECT 2 AS two')).resolves.toEqual([{ two: 2 }]);
    await expect(dataSource.getRepository(Team).count()).resolves.toBe(0);
    finish();
    await expect(transaction).resolves.toEqual([{ done: true }]);
  });
});

describe('the client-side bounds, on the machine’s PostgreSQL', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDataSource({
      url: database.url,
      poolSize: 2,
      // The statement timeout is pushed out of the way so that only the client's bound can fire.
      timeouts: timeouts({ statementTimeoutMs: 60_000, queryTimeoutMs: 500 }),
    });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('fails a query that runs past the query bound, and the pool keeps serving', async () => {
    await expect(withDeadline(dataSource.query('SELECT pg_sleep(5)'), 'pg_sleep')).rejects.toThrow(
      PostgresQueryTimeoutError,
    );
    // Both pool connections still answer: the timed-out one was closed and replaced.
    await expect(
      Promise.all([dataSource.query('SELECT 1 AS one'), dataSource.query('SELECT 2 AS two')]),
    ).resolves.toEqual([[{ one: 1 }], [{ two: 2 }]]);
  });
});

describe('the client-side bounds, on the embedded Postgres', () => {
  let embedded: EmbeddedPostgres;

  beforeAll(async () => {
    embedded = await startTemporaryEmbeddedPostgres('hogbase-guard-test-');
  });

  afterAll(async () => {
    await embedded?.stop();
  });

  async function open(bounds: Partial<PostgresTimeouts>): Promise<DataSource> {
    return openDataSource({ url: embedded.url, poolSize: 3, timeouts: timeouts(bounds) });
  }

  it('fails a query queued behind another connection’s transaction at the query bound, then answers again once it ends', async () => {
    const dataSource = await open({ queryTimeoutMs: 500 });
    // Every pool connection is opened first, so the query below waits on the engine, not on connecting.
    await Promise.all([1, 2, 3].map(() => dataSource.query('SELECT pg_sleep(0.05)')));
    const holder = dataSource.createQueryRunner();
    try {
      await holder.startTransaction();
      await holder.query('SELECT 1');
      // The embedded server serves only the holder's connection until its transaction ends; before
      // the bound existed this query waited for ever.
      await expect(withDeadline(dataSource.query('SELECT 2 AS two'), 'queued query')).rejects.toThrow(
        PostgresQueryTimeoutError,
      );
      await holder.rollbackTransaction();
      await expect(
        withDeadline(dataSource.query('SELECT 3 AS three'), 'query after the transaction'),
      ).resolves.toEqual([{ three: 3 }]);
    } finally {
      await holder.release();
      await dataSource.destroy();
    }
  });

  it('frees every other connection from a transaction left idle past the idle bound', async () => {
    const dataSource = await open({ idleInTransactionTimeoutMs: 500, queryTimeoutMs: 8_000 });
    const holder = dataSource.createQueryRunner();
    try {
      await holder.startTransaction();
      await holder.query('SELECT 1');
      // The holder never comes back; the bound closes its connection and the server rolls it back.
      await expect(
        withDeadline(dataSource.query('SELECT 2 AS two'), 'query behind an idle transaction'),
      ).resolves.toEqual([{ two: 2 }]);
      await expect(holder.query('SELECT 1')).rejects.toThrow();
    } finally {
      await holder.release();
      await dataSource.destroy();
    }
  });

  it('refuses the query on another connection that would deadlock the engine, and keeps serving', async () => {
    const dataSource = await open({});
    try {
      await expect(
        withDeadline(
          dataSource.transaction(async (manager) => {
            await manager.query('SELECT 1');
            await dataSource.query('SELECT 2');
          }),
          'cross-connection query inside a transaction',
        ),
      ).rejects.toThrow(CrossConnectionQueryError);
      await expect(withDeadline(dataSource.query('SELECT 3 AS three'), 'next query')).resolves.toEqual([
        { three: 3 },
      ]);
    } finally {
      await dataSource.destroy();
    }
  });
});
