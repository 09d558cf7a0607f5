import { randomUUID } from 'node:crypto';
import {
  closeClickHouse,
  openClickHouse,
  readEvents,
  rowContentErrorName,
  type EventRow,
} from '@hogbase/clickhouse';
import {
  createTestClickHouse,
  testClickHouseDataPath,
  type TestClickHouse,
} from '@hogbase/clickhouse/testing';
import { CoalescedInsert } from './coalesced-insert.util';

describe('CoalescedInsert on chDB', () => {
  let clickhouse: TestClickHouse;
  let teamId = 0;

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
  });

  afterAll(async () => {
    await clickhouse.drop();
  });

  beforeEach(() => {
    teamId++;
  });

  function rows(count: number, distinctId: string): EventRow[] {
    return Array.from({ length: count }, (_, index) => ({
      uuid: randomUUID(),
      event: 'bought',
      properties: JSON.stringify({ index }),
      timestamp: '2026-11-24 10:00:00.000000',
      team_id: teamId,
      distinct_id: distinctId,
      created_at: '2026-11-24 10:00:00.000000',
      person_id: randomUUID(),
      person_properties: '{"plan":"pro"}',
    }));
  }

  /** The real insert, recording how many rows each INSERT carried. */
  function recordingInsert() {
    const inserts: number[] = [];
    const insert = (batch: readonly EventRow[]) => {
      inserts.push(batch.length);
      return clickhouse.events.insert(batch);
    };
    return { inserts, insert };
  }

  async function storedDistinctIds(): Promise<string[]> {
    const stored = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    return stored.map((row) => row.distinct_id).sort();
  }

  it('sends a lone write at once, and the writes that arrive meanwhile together in the next insert', async () => {
    const { inserts, insert } = recordingInsert();
    const coalesced = new CoalescedInsert(insert);
    const first = coalesced.write(rows(3, 'a'));
    const waiting = [coalesced.write(rows(2, 'b')), coalesced.write(rows(4, 'c'))];
    await Promise.all([first, ...waiting]);
    expect(inserts).toEqual([3, 6]);
    expect(await storedDistinctIds()).toEqual([...'aaabbcccc']);
  });

  it('keeps an insert within maxRows, leaving the rest for the next one', async () => {
    const { inserts, insert } = recordingInsert();
    const coalesced = new CoalescedInsert(insert, 5);
    const first = coalesced.write(rows(1, 'a'));
    const waiting = [3, 2, 4].map((count, index) => coalesced.write(rows(count, `w${index}`)));
    await Promise.all([first, ...waiting]);
    expect(inserts).toEqual([1, 5, 4]);
  });

  it('fails only the write holding a refused row when a shared insert is refused for it', async () => {
    const { inserts, insert } = recordingInsert();
    const coalesced = new CoalescedInsert(insert);
    const first = coalesced.write(rows(1, 'a'));
    const refused = rows(2, 'bad');
    refused[1].timestamp = 'not a time';
    const results = await Promise.allSettled([
      first,
      coalesced.write(rows(2, 'b')),
      coalesced.write(refused),
      coalesced.write(rows(1, 'c')),
    ]);
    expect(results.map(({ status }) => status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(rowContentErrorName((results[2] as PromiseRejectedResult).reason)).toBeDefined();
    // The shared insert of the three, then each of them alone.
    expect(inserts).toEqual([1, 5, 2, 2, 1]);
    expect(await storedDistinctIds()).toEqual(['a', 'b', 'b', 'c']);
  });

  it('fails every write of a shared insert that fails for another reason, and goes on afterwards', async () => {
    const missing = openClickHouse({
      database: `${clickhouse.database}_missing`,
      dataPath: testClickHouseDataPath(),
    });
    try {
      let events = missing.events;
      const inserts: number[] = [];
      const coalesced = new CoalescedInsert((batch: readonly EventRow[]) => {
        inserts.push(batch.length);
        return events.insert(batch);
      });
      const results = await Promise.allSettled([
        coalesced.write(rows(1, 'a')),
        coalesced.write(rows(1, 'b')),
        coalesced.write(rows(1, 'c')),
      ]);
      expect(results.map(({ status }) => status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(rowContentErrorName((results[1] as PromiseRejectedResult).reason)).toBeUndefined();
      expect(inserts).toEqual([1, 2]);

      events = clickhouse.events;
      await coalesced.write(rows(1, 'd'));
      expect(await storedDistinctIds()).toEqual(['d']);
    } finally {
      await closeClickHouse(missing.client);
    }
  });
});
