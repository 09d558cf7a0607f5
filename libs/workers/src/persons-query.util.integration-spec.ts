import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { insertProjectRows } from '@hogbase/test-support';
import {
  countPersonRows,
  decodePersonsCursor,
  encodePersonsCursor,
  isPersonsCursor,
  openPersonsChunk,
  type PersonsCursor,
  type PersonsSelection,
} from './persons-query.util';

/** A time of the test day, as Postgres reads it (microseconds kept, which a Date would drop). */
const T = (time: string) => `2026-01-01T${time}Z`;
const D = (time: string) => new Date(T(time));

describe('persons query: the rows of a persons run, from Postgres', () => {
  let database: MigratedTestDatabase;
  let pool: Pool;
  /** Writes with the triggers off, so that a test sets `updated_at` itself. */
  let seeder: PoolClient;
  let teamId: number;
  let otherTeamId: number;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    ({ teamId } = await insertProjectRows(pool, 'Persons'));
    ({ teamId: otherTeamId } = await insertProjectRows(pool, 'Other persons'));
    seeder = await pool.connect();
    // The test role is a superuser (npm test creates it so): replica mode skips ordinary triggers.
    await seeder.query(`SET session_replication_role = replica`);
  });

  afterAll(async () => {
    seeder?.release();
    await database?.close();
  });

  beforeEach(async () => {
    await pool.query('DELETE FROM persons');
  });

  async function person(
    team: number,
    updatedAt: string,
    options: { properties?: Record<string, unknown>; version?: number } = {},
  ): Promise<{ id: string; uuid: string }> {
    const uuid = randomUUID();
    const { rows } = await seeder.query<{ id: string }>(
      `INSERT INTO persons (uuid, team_id, properties, created_at, version, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [
        uuid,
        team,
        JSON.stringify(options.properties ?? {}),
        T('00:00:00.000001'),
        options.version ?? 0,
        updatedAt,
      ],
    );
    return { id: rows[0].id, uuid };
  }

  async function distinctId(
    team: number,
    id: string,
    personId: string,
    updatedAt: string,
    version = 0,
  ): Promise<void> {
    await seeder.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version, updated_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [team, id, personId, version, updatedAt],
    );
  }

  /** Every chunk of a run, walked with the cursor as the executor does. */
  async function exportAll(
    selection: PersonsSelection,
    maxRows: number,
    from?: PersonsCursor,
  ): Promise<{ chunks: Record<string, unknown>[][]; cursors: string[] }> {
    const chunks: Record<string, unknown>[][] = [];
    const cursors: string[] = [];
    let after = from;
    for (;;) {
      const chunk = await openPersonsChunk(pool, selection, after, maxRows);
      if (!chunk) break;
      let text = '';
      for await (const data of chunk.body) text += String(data);
      await chunk.close();
      const rows = text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(rows).toHaveLength(chunk.records);
      chunks.push(rows);
      cursors.push(encodePersonsCursor(chunk.until));
      // The cursor survives the text column it is stored in.
      after = decodePersonsCursor(encodePersonsCursor(chunk.until));
    }
    return { chunks, cursors };
  }

  it("selects a row by the later of its person's and its distinct id's last change, inside [start, end)", async () => {
    // The distinct id changed in the interval (the person before it).
    const alice = await person(teamId, T('09:00:00'));
    await distinctId(teamId, 'alice', alice.id, T('10:15:00'));
    // The person changed in the interval: all its distinct ids go out, also those older.
    const bob = await person(teamId, T('10:30:00'));
    await distinctId(teamId, 'bob-web', bob.id, T('08:00:00'));
    await distinctId(teamId, 'bob-ios', bob.id, T('08:05:00'));
    // Both before the interval: an earlier run had it.
    const carol = await person(teamId, T('09:00:00'));
    await distinctId(teamId, 'carol', carol.id, T('09:30:00'));
    // Its distinct id in the interval, but the person changed after: the run of that change has it.
    const dave = await person(teamId, T('11:00:00'));
    await distinctId(teamId, 'dave', dave.id, T('10:20:00'));
    // At the end: the next run's.
    const erin = await person(teamId, T('09:00:00'));
    await distinctId(teamId, 'erin', erin.id, T('11:00:00'));
    // At the start: this run's.
    const frank = await person(teamId, T('10:00:00'));
    await distinctId(teamId, 'frank', frank.id, T('09:00:00'));
    // Another project's.
    const other = await person(otherTeamId, T('10:30:00'));
    await distinctId(otherTeamId, 'alice', other.id, T('10:30:00'));

    const hour = { teamId, start: D('10:00:00'), end: D('11:00:00') };
    const { chunks } = await exportAll(hour, 100);
    expect(chunks.flat().map((row) => [row.distinct_id, row._inserted_at])).toEqual([
      ['frank', '2026-01-01T10:00:00.000000Z'],
      ['alice', '2026-01-01T10:15:00.000000Z'],
      ['bob-ios', '2026-01-01T10:30:00.000000Z'],
      ['bob-web', '2026-01-01T10:30:00.000000Z'],
    ]);
    expect(await countPersonRows(pool, hour)).toBe(4);

    // From the beginning: everything changed before the end.
    const everything = await exportAll({ teamId, start: null, end: D('11:00:00') }, 100);
    expect(everything.chunks.flat().map((row) => row.distinct_id)).toEqual([
      'carol',
      'frank',
      'alice',
      'bob-ios',
      'bob-web',
    ]);
    expect(await countPersonRows(pool, { teamId, start: null, end: D('11:00:00') })).toBe(5);
  });

  it("writes PostHog's persons fields, in its order, as one JSON line per distinct id", async () => {
    const properties = {
      email: 'a@example.com',
      nested: { list: [1, 'two'] },
      text: 'line\nbreak "quoted" ✓',
    };
    const alice = await person(teamId, T('10:00:00.123456'), { properties, version: 7 });
    await distinctId(teamId, 'alice', alice.id, T('09:00:00'), 3);

    const { chunks } = await exportAll({ teamId, start: D('10:00:00'), end: D('11:00:00') }, 100);
    const [row] = chunks.flat();
    expect(Object.keys(row)).toEqual([
      'team_id',
      'distinct_id',
      'person_id',
      'properties',
      'person_distinct_id_version',
      'person_version',
      'created_at',
      '_inserted_at',
      'is_deleted',
    ]);
    expect(row).toEqual({
      team_id: teamId,
      distinct_id: 'alice',
      person_id: alice.uuid,
      properties,
      person_distinct_id_version: 3,
      person_version: 7,
      created_at: '2026-01-01T00:00:00.000001Z',
      _inserted_at: '2026-01-01T10:00:00.123456Z',
      is_deleted: false,
    });
  });

  it('walks a run in chunks by (change time, distinct id): each row once, ties and odd ids included', async () => {
    const ids = ['a|b', 'a"b', 'z', 'm', 'b\\c', 'é', 'persons:["x"]'];
    for (const [index, id] of ids.entries()) {
      const owner = await person(teamId, T('09:00:00'));
      // Three rows share a change time: the distinct id orders them.
      await distinctId(teamId, id, owner.id, index < 3 ? T('10:10:00') : T(`10:2${index}:00`));
    }
    const hour = { teamId, start: D('10:00:00'), end: D('11:00:00') };
    const whole = (await exportAll(hour, 100)).chunks.flat().map((row) => row.distinct_id);
    expect([...whole].sort()).toEqual([...ids].sort());

    const { chunks, cursors } = await exportAll(hour, 2);
    expect(chunks.map((chunk) => chunk.length)).toEqual([2, 2, 2, 1]);
    expect(chunks.flat().map((row) => row.distinct_id)).toEqual(whole);
    expect(cursors.every(isPersonsCursor)).toBe(true);

    // A run resumed after its second chunk goes on with the third row of the order.
    const resumed = await exportAll(hour, 100, decodePersonsCursor(cursors[1]));
    expect(resumed.chunks.flat().map((row) => row.distinct_id)).toEqual(whole.slice(4));
  });

  it('streams a chunk a page at a time, and frees the connection whether the chunk was read or not', async () => {
    const owner = await person(teamId, T('09:00:00'));
    await seeder.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at)
       SELECT $1, 'visitor-' || lpad(n::text, 5, '0'), $2, $3 FROM generate_series(1, 2500) AS n`,
      [teamId, owner.id, T('10:30:00')],
    );
    const hour = { teamId, start: D('10:00:00'), end: D('11:00:00') };

    const chunk = await openPersonsChunk(pool, hour, undefined, 2_400);
    expect(chunk?.records).toBe(2_400);
    expect(chunk?.until).toEqual({ changedAt: '2026-01-01T10:30:00.000000Z', distinctId: 'visitor-02400' });
    const pieces: string[] = [];
    for await (const data of chunk!.body) pieces.push(String(data));
    await chunk!.close();
    // 1,000 rows per FETCH: three pieces, each whole lines.
    expect(pieces.map((piece) => piece.split('\n').length - 1)).toEqual([1_000, 1_000, 400]);
    expect(pool.totalCount - pool.idleCount).toBe(1); // the seeder only

    const unread = await openPersonsChunk(pool, hour, undefined, 2_400);
    expect(pool.totalCount - pool.idleCount).toBe(2);
    await unread!.close();
    expect(pool.totalCount - pool.idleCount).toBe(1);
  });

  it('has no chunk for an interval without changes, and refuses a cursor that is not a persons one', async () => {
    expect(
      await openPersonsChunk(pool, { teamId, start: D('10:00:00'), end: D('11:00:00') }, undefined, 10),
    ).toBe(undefined);
    expect(pool.totalCount - pool.idleCount).toBe(1);
    expect(isPersonsCursor('2026-01-01 10:00:00.000000|0190f000-0000-7000-8000-000000000001')).toBe(false);
    expect(() => decodePersonsCursor('2026-01-01 10:00:00.000000|0190f000')).toThrow(
      'not a persons run cursor',
    );
  });

  it("is kept current by the tables' triggers on every write: inserts, updates and a merge moving a distinct id", async () => {
    const before = new Date(Date.now() - 1_000);
    // Writes as ingestion makes them (triggers on), with a stale updated_at the trigger replaces.
    const insert = async (distinct: string) => {
      const { rows } = await pool.query<{ id: string; uuid: string }>(
        `INSERT INTO persons (uuid, team_id, properties, updated_at) VALUES ($1, $2, '{}', '2000-01-01') RETURNING id, uuid`,
        [randomUUID(), teamId],
      );
      await pool.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at) VALUES ($1, $2, $3, '2000-01-01')`,
        [teamId, distinct, rows[0].id],
      );
      return rows[0];
    };
    const anonymous = await insert('anonymous');
    const identified = await insert('user@example.com');
    const firstRun = { teamId, start: before, end: new Date(Date.now() + 60_000) };
    expect(await countPersonRows(pool, firstRun)).toBe(2);

    const merged = new Date();
    await pool.query(
      `UPDATE person_distinct_ids SET person_id = $1, version = version + 1 WHERE person_id = $2`,
      [identified.id, anonymous.id],
    );
    await pool.query(`DELETE FROM persons WHERE id = $1`, [anonymous.id]);
    await pool.query(
      `UPDATE persons SET properties = '{"plan":"pro"}', version = version + 1 WHERE id = $1`,
      [identified.id],
    );

    const afterMerge = { teamId, start: merged, end: new Date(Date.now() + 60_000) };
    const rows = (await exportAll(afterMerge, 100)).chunks.flat();
    expect(
      rows.map((row) => [row.distinct_id, row.person_id, row.person_distinct_id_version, row.properties]),
    ).toEqual(
      expect.arrayContaining([
        ['anonymous', identified.uuid, 1, { plan: 'pro' }],
        ['user@example.com', identified.uuid, 0, { plan: 'pro' }],
      ]),
    );
    expect(rows).toHaveLength(2);
  });
});
