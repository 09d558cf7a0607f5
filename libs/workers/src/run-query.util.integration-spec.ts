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
} from './run-query.util';

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
    lateSince: new Date('2026-01-01T00:00:00Z'),
    lagSeconds: 60,
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

  describe('events that arrive late', () => {
    const lateTeam = team + 7;
    /** The export was created at 10:10; its lag is a minute. */
    const lateSince = new Date('2026-01-05T10:10:00Z');
    const events = {
      onTime: { timestamp: '2026-01-05 10:30:00.000000', created_at: '2026-01-05 10:30:01.000000' },
      withinTheLag: { timestamp: '2026-01-05 10:59:30.000000', created_at: '2026-01-05 11:00:45.000000' },
      lateIntoTen: { timestamp: '2026-01-05 09:15:00.000000', created_at: '2026-01-05 10:20:00.000000' },
      lateIntoEleven: { timestamp: '2026-01-05 10:15:00.000000', created_at: '2026-01-05 11:30:00.000000' },
      beforeTheExport: { timestamp: '2026-01-05 08:00:00.000000', created_at: '2026-01-05 10:05:00.000000' },
    };
    const uuidOf = new Map<string, string>();

    beforeAll(async () => {
      const rows = Object.entries(events).map(([name, times]) => {
        uuidOf.set(name, randomUUID());
        return row(uuidOf.get(name)!, times.timestamp, { team_id: lateTeam, created_at: times.created_at });
      });
      await insertEvents(clickhouse.client, clickhouse.database, rows);
      // Kafka delivered one again: the same row, the same created_at (capture's receipt time).
      await insertEvents(clickhouse.client, clickhouse.database, [rows[2]]);
    });

    async function exportedBy(startHour: number): Promise<string[]> {
      const hour = (h: number) => new Date(Date.UTC(2026, 0, 5, h));
      const selection: RunSelection = {
        database: clickhouse.database,
        teamId: lateTeam,
        start: hour(startHour),
        end: hour(startHour + 1),
        lateSince,
        lagSeconds: 60,
      };
      const until = { timestamp: '2026-01-06 00:00:00.000000', uuid: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
      const output = await text(
        chunkRowsQuery(selection, { after: undefined, until }, { format: 'JSONEachRow', fields: ['uuid'] }),
      );
      const names = new Map([...uuidOf].map(([name, uuid]) => [uuid, name]));
      return output
        .split('\n')
        .filter(Boolean)
        .map((line) => names.get((JSON.parse(line) as { uuid: string }).uuid) ?? line);
    }

    it('belong to the interval they arrived in, once captured after the export was created', async () => {
      expect(await exportedBy(8)).toEqual(['beforeTheExport']);
      expect(await exportedBy(9)).toEqual([]);
      // (timestamp, uuid) order: the late arrival's timestamp is the oldest.
      expect(await exportedBy(10)).toEqual(['lateIntoTen', 'onTime', 'withinTheLag']);
      expect(await exportedBy(11)).toEqual(['lateIntoEleven']);
      expect(await exportedBy(12)).toEqual([]);
    });

    it('are counted in the run that owns them, and by no other', async () => {
      const count = async (start: Date | null, end: string) => {
        const [result] = await rowsOf<{ rows: string }>(
          countQuery({
            database: clickhouse.database,
            teamId: lateTeam,
            start,
            end: new Date(end),
            lateSince,
            lagSeconds: 60,
          }),
        );
        return Number(result.rows);
      };
      expect(await count(new Date('2026-01-05T10:00:00Z'), '2026-01-05T11:00:00Z')).toBe(3);
      // A backfill from the beginning up to 11:00 has all but the one that arrived into 11:00.
      expect(await count(null, '2026-01-05T11:00:00Z')).toBe(4);
      expect(await count(null, '2026-01-05T12:00:00Z')).toBe(5);
    });
  });
});
