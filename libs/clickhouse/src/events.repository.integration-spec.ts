import { randomUUID } from 'node:crypto';
import { ClickHouseError } from '@clickhouse/client';
import { toClickHouseDateTime64 } from './clickhouse-datetime.util';
import type { EventRow } from './event-row.types';
import { readEvents, rowContentErrorName } from './events.repository';
import { createTestClickHouse, TestClickHouse } from './testing';

const PERSON_ID = '0190c3a4-1b2c-7d3e-8f40-123456789abc';

function eventRow(overrides: Partial<EventRow> = {}): EventRow {
  return {
    uuid: randomUUID(),
    event: '$pageview',
    properties: JSON.stringify({ $current_url: 'https://example.com/' }),
    timestamp: '2024-03-01 10:00:00.000000',
    team_id: 1,
    distinct_id: 'user-1',
    created_at: '2024-03-01 10:00:01.000000',
    person_id: PERSON_ID,
    ...overrides,
  };
}

async function count(clickHouse: TestClickHouse, final: boolean): Promise<string> {
  const result = await clickHouse.client.query({
    query: `SELECT count() AS events FROM ${clickHouse.database}.events${final ? ' FINAL' : ''}`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ events: string }>();
  return row.events;
}

describe('events repository', () => {
  let clickHouse: TestClickHouse;

  beforeEach(async () => {
    clickHouse = await createTestClickHouse();
  });

  afterEach(async () => {
    await clickHouse.drop();
  });

  it('keeps one row per event when the same batch of 1,000 events is inserted twice', async () => {
    const start = Date.UTC(2024, 2, 1);
    const rows = Array.from({ length: 1_000 }, (_, index) =>
      eventRow({
        timestamp: toClickHouseDateTime64(new Date(start + index * 3_600_000)),
        distinct_id: `user-${index % 37}`,
      }),
    );

    await clickHouse.events.insert(rows);
    await clickHouse.events.insert(rows);

    const stored = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    expect(stored).toHaveLength(1_000);
    expect(new Set(stored.map((row) => row.uuid)).size).toBe(1_000);
    expect(stored.map((row) => row.uuid).sort()).toEqual(rows.map((row) => row.uuid).sort());
    // The engine itself collapses them once merged, not only the FINAL read.
    await clickHouse.client.command({ query: `OPTIMIZE TABLE ${clickHouse.database}.events FINAL` });
    expect(await count(clickHouse, false)).toBe('1000');
  });

  it('keeps the latest version of an event inserted again', async () => {
    const row = eventRow({ _timestamp: '2024-03-01 10:00:01' });
    await clickHouse.events.insert([row]);
    await clickHouse.events.insert([
      { ...row, person_properties: '{"plan":"pro"}', _timestamp: '2024-03-01 10:05:00' },
    ]);

    const stored = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    expect(stored.map((event) => event.person_properties)).toEqual(['{"plan":"pro"}']);
  });

  it('deduplicates within a project only: the same uuid in another project is another event', async () => {
    const row = eventRow();
    await clickHouse.events.insert([row, { ...row, team_id: 2 }]);

    expect(await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 })).toHaveLength(1);
    expect(await readEvents(clickHouse.client, clickHouse.database, { teamId: 2 })).toHaveLength(1);
  });

  it('round-trips DateTime64 values to the microsecond', async () => {
    const row = eventRow({
      timestamp: toClickHouseDateTime64('2024-02-29T23:59:59.999999+00:00'),
      created_at: toClickHouseDateTime64('2024-03-01T01:00:00.000001+01:00'),
      person_created_at: '2023-12-31 23:59:59.123',
    });
    await clickHouse.events.insert([row]);

    const [stored] = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    expect(stored).toMatchObject({
      timestamp: '2024-02-29 23:59:59.999999',
      created_at: '2024-03-01 00:00:00.000001',
      person_created_at: '2023-12-31 23:59:59.123',
    });
  });

  it('stores every column as written, and fills the defaults of the ones left out', async () => {
    const row = eventRow({
      properties: JSON.stringify({ $group_0: 'acme', $group_2: 42, emoji: '🦔', quote: 'it\'s "ok"' }),
      elements_chain: 'a:nth-child="1"',
    });
    await clickHouse.events.insert([row]);

    const [stored] = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    expect(stored).toEqual({
      ...row,
      person_properties: '{}',
      person_created_at: '1970-01-01 00:00:00.000',
      $group_0: 'acme',
      $group_1: '',
      $group_2: '42',
      $group_3: '',
      $group_4: '',
      _timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) as string,
      _offset: '0',
    });
  });

  it('stores tabs, newlines, carriage returns and backslashes in any text column as written', async () => {
    const text = 'tab\there\nnew line\r\\N back\\slash "quoted"';
    const row = eventRow({
      event: `custom ${text}`,
      distinct_id: text,
      properties: JSON.stringify({ text, nested: { text } }),
      elements_chain: `a:text="${text}"`,
      person_properties: JSON.stringify({ name: text }),
      $group_0: text,
    });
    await clickHouse.events.insert([row]);

    const [stored] = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    expect(stored).toMatchObject(row);
  });

  it('gives each row the defaults of the columns it leaves out, in a batch of rows that differ', async () => {
    const properties = JSON.stringify({ $group_0: 'acme' });
    const withGroup = eventRow({ properties, $group_0: 'explicit', _offset: 7 });
    const withoutGroup = eventRow({ properties });
    await clickHouse.events.insert([withGroup, withoutGroup]);

    const stored = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    const byUuid = new Map(stored.map((event) => [event.uuid, event]));
    expect(byUuid.get(withGroup.uuid)).toMatchObject({ $group_0: 'explicit', _offset: '7' });
    expect(byUuid.get(withoutGroup.uuid)).toMatchObject({ $group_0: 'acme', _offset: '0' });
  });

  it('returns 64-bit integers as strings, exactly, past 2^53', async () => {
    await clickHouse.events.insert([eventRow({ _offset: '9007199254740993' })]);

    const [stored] = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
    expect(stored?._offset).toBe('9007199254740993');
    expect(stored?.team_id).toBe(1);
    expect(await count(clickHouse, true)).toBe('1');
  });

  it('refuses a row with a field the table does not have, instead of dropping it', async () => {
    const row = { ...eventRow(), not_a_column: 'x' } as EventRow;

    await expect(clickHouse.events.insert([row])).rejects.toThrow(/not_a_column/);
    expect(await count(clickHouse, false)).toBe('0');
  });

  it("refuses a value the column cannot hold with ClickHouse's exception name, and writes none of the batch", async () => {
    const rows = [eventRow(), eventRow({ person_id: 'not-a-uuid' })];

    const refusal = clickHouse.events.insert(rows);

    await expect(refusal).rejects.toBeInstanceOf(ClickHouseError);
    expect(rowContentErrorName(await refusal.catch((error: unknown) => error))).toMatch(/^CANNOT_PARSE/);
    expect(await count(clickHouse, false)).toBe('0');
  });

  it('does nothing for an empty batch', async () => {
    await clickHouse.events.insert([]);

    expect(await count(clickHouse, false)).toBe('0');
  });

  it('keeps the rows of two databases apart on the shared engine', async () => {
    const other = await createTestClickHouse();
    try {
      await clickHouse.events.insert([eventRow({ event: 'in-first' })]);
      await other.events.insert([eventRow({ event: 'in-second' }), eventRow({ event: 'in-second' })]);

      const first = await readEvents(clickHouse.client, clickHouse.database, { teamId: 1 });
      const second = await readEvents(other.client, other.database, { teamId: 1 });
      expect(first.map((row) => row.event)).toEqual(['in-first']);
      expect(second.map((row) => row.event)).toEqual(['in-second', 'in-second']);
    } finally {
      await other.drop();
    }
  });
});
