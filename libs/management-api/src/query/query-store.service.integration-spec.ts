import {
  createTestClickHouse,
  testClickHouseDataPath,
  type TestClickHouse,
} from '@hogbase/clickhouse/testing';
import { eventually } from '@hogbase/test-support';
import { queryIdFor, QueryStore } from './query-store.service';

/** The Query API's reads on chDB: queries run side by side, and a cancelled one stops. */
describe('QueryStore', () => {
  let clickhouse: TestClickHouse;
  let store: QueryStore;

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    store = new QueryStore({ database: clickhouse.database, dataPath: testClickHouseDataPath() });
  });

  afterAll(async () => {
    await store?.onApplicationShutdown();
    await clickhouse?.drop();
  });

  /** Queries of project 7 running now (not counting this one). */
  async function running(): Promise<number> {
    const result = await clickhouse.client.query({
      query:
        "SELECT count() AS n FROM system.processes WHERE position(query, {marker:String}) > 0 AND position(query, 'system.processes') = 0",
      query_params: { marker: '/* hogbase-query:7:' },
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ n: string | number }>())[0].n);
  }

  it('stops a cancelled query on the engine, and the next query does not wait behind it', async () => {
    const id = queryIdFor(7);
    const controller = new AbortController();
    // Minutes of work for the engine, unless it is stopped.
    const endless = store.select(
      'SELECT count() FROM numbers(1500000000) WHERE NOT ignore(sipHash64(toString(number)))',
      {},
      id,
      controller.signal,
    );
    const outcome = endless.then(
      () => 'finished',
      (error: unknown) => String(error),
    );
    await eventually('the query to run', async () => (await running()) === 1, { timeoutMs: 10_000 });
    controller.abort(new Error('Query cancelled.'));
    await store.kill(id);
    await eventually('the query to stop', async () => (await running()) === 0, { timeoutMs: 10_000 });
    expect(await outcome).not.toBe('finished');
    const next = await store.select('SELECT 1 AS one', {}, queryIdFor(7));
    expect(next.data).toEqual([[1]]);
  });

  it('runs a second query while a first one runs', async () => {
    const id = queryIdFor(7);
    const controller = new AbortController();
    const endless = store
      .select(
        'SELECT count() FROM numbers(1500000000) WHERE NOT ignore(sipHash64(toString(number)))',
        {},
        id,
        controller.signal,
      )
      .catch((error: unknown) => String(error));
    await eventually('the first query to run', async () => (await running()) === 1, { timeoutMs: 10_000 });
    const second = await store.select('SELECT 2 AS two', {}, queryIdFor(7));
    expect(second.data).toEqual([[2]]);
    controller.abort(new Error('done'));
    await store.kill(id);
    await endless;
    await eventually('the first query to stop', async () => (await running()) === 0, { timeoutMs: 10_000 });
  });

  it('refuses to kill by anything but an id it made', async () => {
    await expect(store.kill("x' OR 1 = 1 --")).rejects.toThrow('Not a query id of this service');
  });
});
