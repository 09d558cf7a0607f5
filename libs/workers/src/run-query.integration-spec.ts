import { randomUUID } from 'node:crypto';
import { insertEvents, type EventRow } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import {
  chunkBoundsQuery,
  chunkRowsQuery,
  countQuery,
  ROW_FIELDS,
  S3_DEFAULT_FIELDS,
  type RunCursor,
  type RunSelection,
} from './run-query';

describe('run queries on ClickHouse (chDB)', () => {
  let clickhouse: TestClickHouse;
  const team = 42;
  const uuids: string[] = [];

  function row(uuid: string, timestamp: string, extra: Partial<EventRow> = {}): EventRow {
    return {
      uuid,
      event: 'signed up',
      properties: JSON.stringify({ plan: 'pro', $set: { email: 'a@b.c' }, nested: { n: 1 } }),
      timestamp,
      team_id: team,
      distinct_id: 'user-1',
      created_at: timestamp,
      person_id: randomUUID(),
      ...extra,
    };
  }

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    const rows: EventRow[] = [];
    for (let i = 0; i < 25; i++) {
      const uuid = randomUUID();
      uuids.push(uuid);
      rows.push(row(uuid, `2026-01-05 10:${String(i * 2).padStart(2, '0')}:00.000000`));
    }
    // Outside the interval, another project, an excluded event, and a redelivered duplicate.
    rows.push(row(randomUUID(), '2026-01-05 11:00:00.000000'));
    rows.push(row(randomUUID(), '2026-01-05 09:59:59.999999'));
    rows.push(row(randomUUID(), '2026-01-05 10:30:00.000000', { team_id: team + 1 }));
    rows.push(row(randomUUID(), '2026-01-05 10:31:00.000000', { event: '$feature_flag_called' }));
    await insertEvents(clickhouse.client, clickhouse.database, rows);
    await insertEvents(clickhouse.client, clickhouse.database, [rows[3]]);
  });

  afterAll(async () => {
    await clickhouse?.drop();
  });

  const run = (): RunSelection => ({
    database: clickhouse.database,
    teamId: team,
    start: new Date('2026-01-05T10:00:00Z'),
    end: new Date('2026-01-05T11:00:00Z'),
    excludeEvents: ['$feature_flag_called'],
  });

  async function rowsOf<T>(built: { query: string; params: Record<string, unknown> }): Promise<T[]> {
    const result = await clickhouse.client.query({
      query: built.query,
      query_params: built.params,
      format: 'JSONEachRow',
    });
    return result.json<T>();
  }

  async function text(built: { query: string; params: Record<string, unknown> }): Promise<string> {
    const result = await clickhouse.client.exec({ query: built.query, query_params: built.params });
    const parts: Buffer[] = [];
    for await (const part of result.stream) parts.push(Buffer.from(part as Buffer));
    return Buffer.concat(parts).toString('utf8');
  }

  it("counts each event of the interval once, redelivered or not, and only the project's", async () => {
    expect(await rowsOf(countQuery(run()))).toEqual([{ rows: '25' }]);
  });

  it('walks the interval in chunks, each row once, in (timestamp, uuid) order, as JSON lines', async () => {
    const seen: Record<string, unknown>[] = [];
    let after: RunCursor | undefined;
    for (;;) {
      const [bounds] = await rowsOf<{ rows: string; last_timestamp: string; last_uuid: string }>(
        chunkBoundsQuery(run(), after, 10),
      );
      if (Number(bounds.rows) === 0) break;
      const until = { timestamp: bounds.last_timestamp, uuid: bounds.last_uuid };
      const lines = (
        await text(chunkRowsQuery(run(), { after, until }, { format: 'JSONEachRow', fields: ROW_FIELDS }))
      )
        .trimEnd()
        .split('\n');
      expect(lines).toHaveLength(Number(bounds.rows));
      seen.push(...lines.map((line) => JSON.parse(line) as Record<string, unknown>));
      after = until;
    }
    expect(seen.map((item) => item.uuid)).toEqual(uuids);
    expect(seen[0]).toEqual({
      uuid: uuids[0],
      event: 'signed up',
      timestamp: '2026-01-05T10:00:00.000000Z',
      created_at: '2026-01-05T10:00:00.000000Z',
      _inserted_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      distinct_id: 'user-1',
      team_id: team,
      properties: { plan: 'pro', $set: { email: 'a@b.c' }, nested: { n: 1 } },
      elements_chain: '',
      person_id: expect.any(String),
      person_properties: {},
      set: { email: 'a@b.c' },
      set_once: null,
    });
  });

  it('writes the S3 default fields, and Parquet bytes', async () => {
    const until = { timestamp: '2026-01-05 10:59:59.999999', uuid: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
    const output = await text(
      chunkRowsQuery(
        run(),
        { after: undefined, until },
        { format: 'JSONEachRow', fields: S3_DEFAULT_FIELDS },
      ),
    );
    const first = JSON.parse(output.split('\n')[0]) as Record<string, unknown>;
    expect(Object.keys(first)).toEqual([...S3_DEFAULT_FIELDS]);
    const parquet = await clickhouse.client.exec({
      ...(() => {
        const built = chunkRowsQuery(
          run(),
          { after: undefined, until },
          { format: 'Parquet', fields: S3_DEFAULT_FIELDS },
        );
        return { query: built.query, query_params: built.params };
      })(),
    });
    const parts: Buffer[] = [];
    for await (const part of parquet.stream) parts.push(Buffer.from(part as Buffer));
    const bytes = Buffer.concat(parts);
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
  });
});
