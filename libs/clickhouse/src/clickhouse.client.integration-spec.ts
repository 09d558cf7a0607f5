import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  closeClickHouse,
  ClickHouseEngineError,
  createClickHouse,
  embeddedClickHouseDataPath,
  isEmbeddedClickHouse,
} from './clickhouse.client';
import { createTestClickHouse, TestClickHouse, testClickHouseDataPath } from './testing';

describe('createClickHouse on the embedded engine', () => {
  let clickHouse: TestClickHouse;

  beforeAll(async () => {
    clickHouse = await createTestClickHouse({ migrate: false });
    await clickHouse.client.command({
      query: `CREATE TABLE ${clickHouse.database}.numbers (n UInt64) ENGINE = MergeTree ORDER BY n`,
    });
    await clickHouse.client.insert({
      table: `${clickHouse.database}.numbers`,
      values: [{ n: 1 }, { n: 2 }, { n: 3 }],
      format: 'JSONEachRow',
    });
  });

  afterAll(async () => {
    await clickHouse.drop();
  });

  it("shares the process's engine: a second client sees what the first wrote", async () => {
    const second = createClickHouse({ database: clickHouse.database });
    try {
      expect(isEmbeddedClickHouse(second)).toBe(true);
      expect(embeddedClickHouseDataPath()).toBe(testClickHouseDataPath());
      const result = await second.query({
        query: `SELECT sum(n) AS total FROM ${clickHouse.database}.numbers`,
        format: 'JSONEachRow',
      });
      expect(await result.json()).toEqual([{ total: '6' }]);
    } finally {
      await closeClickHouse(second);
    }
  });

  it('refuses a second data path in the same process, saying why', async () => {
    const otherPath = await mkdtemp(path.join(tmpdir(), 'hogbase-chdb-other-'));
    try {
      expect(() => createClickHouse({ database: 'test_other', dataPath: otherPath })).toThrow(
        ClickHouseEngineError,
      );
      expect(() => createClickHouse({ database: 'test_other', dataPath: otherPath })).toThrow(
        /bound to .* and cannot also open .*one engine per process/,
      );
    } finally {
      await rm(otherPath, { recursive: true, force: true });
    }
  });

  it('closes one client without breaking the others, and tolerates a second close', async () => {
    const second = createClickHouse({ database: clickHouse.database, dataPath: testClickHouseDataPath() });
    await second.query({ query: 'SELECT 1', format: 'JSONEachRow' });
    await closeClickHouse(second);
    await closeClickHouse(second);

    await expect(second.query({ query: 'SELECT 1', format: 'JSONEachRow' })).rejects.toThrow(/closed/);
    const result = await clickHouse.client.query({
      query: `SELECT count() AS rows FROM ${clickHouse.database}.numbers`,
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ rows: '3' }]);
    expect(embeddedClickHouseDataPath()).toBe(testClickHouseDataPath());
  });

  it('returns 64-bit integers as strings and binds query parameters', async () => {
    const result = await clickHouse.client.query({
      query: `SELECT count() AS matches, toInt64({big:Int64}) AS big, {name:String} AS name
              FROM ${clickHouse.database}.numbers WHERE n >= {min:UInt64}`,
      query_params: { big: '9007199254740993', name: "o'hare", min: 2 },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ matches: '2', big: '9007199254740993', name: "o'hare" }]);
  });

  it('answers a ping', async () => {
    await expect(clickHouse.client.ping()).resolves.toEqual({ success: true });
  });

  it('refuses a database name that is not a plain identifier', () => {
    expect(() => createClickHouse({ database: 'x; DROP DATABASE y' })).toThrow(
      /Invalid ClickHouse database name/,
    );
  });
});
