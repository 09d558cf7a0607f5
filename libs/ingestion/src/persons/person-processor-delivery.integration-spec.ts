import { Pool } from 'pg';
import {
  captured,
  countRows,
  createIngestionTestDatabase,
  IngestionTestDatabase,
  personOf,
  snapshot,
  processed,
} from '../testing/ingestion-test.util';
import { PersonProcessor } from './person-processor.service';
import { personUuid } from './person-uuid.util';

describe('PersonProcessor: delivery (redelivery, poison messages, failures, concurrency)', () => {
  let db: IngestionTestDatabase;
  let processor: PersonProcessor;
  let teamId: number;

  beforeAll(async () => {
    db = await createIngestionTestDatabase();
    processor = new PersonProcessor(db.pool);
  });
  afterAll(async () => db.close());
  beforeEach(async () => {
    teamId = await db.createTeam();
  });

  it('gives the same persons, distinct ids and groups when a batch is delivered twice', async () => {
    await processor.processBatch([
      captured(teamId, 'anon-2', '$pageview', { properties: { $set: { device: 'phone' } } }),
      captured(teamId, 'anon-3', '$pageview', {}),
    ]);
    const batch = [
      captured(teamId, 'anon-1', '$pageview', {
        properties: { $current_url: 'https://a.example', $set: { n: 1 } },
      }),
      captured(teamId, 'user-1', '$identify', {
        properties: {
          $anon_distinct_id: 'anon-1',
          $set: { email: 'a@example.com' },
          $set_once: { first: 'x' },
        },
      }),
      captured(teamId, 'anon-2', '$create_alias', { properties: { alias: 'user-1' } }),
      captured(teamId, 'user-1', '$merge_dangerously', { properties: { alias: 'anon-3' } }),
      captured(teamId, 'user-1', '$set', { properties: { $unset: ['n'], $set: { m: 2 } } }),
      captured(teamId, 'user-1', '$groupidentify', {
        properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 3 } },
      }),
      captured(teamId, 'user-1', 'paid', { properties: { $groups: { company: 'acme', project: 'p' } } }),
      captured(teamId, 'user-2', 'personless', { properties: { $process_person_profile: false } }),
    ];

    const first = await processor.processBatch(batch);
    const afterFirst = await snapshot(db.pool, teamId);
    const second = await processor.processBatch(batch);

    expect(await snapshot(db.pool, teamId)).toEqual(afterFirst);
    expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
    expect(await countRows(db.pool, 'person_distinct_ids', teamId)).toBe(4);
    expect(second.map((outcome) => processed(outcome).personId)).toEqual(
      first.map((outcome) => processed(outcome).personId),
    );
    expect(second.map((outcome) => processed(outcome).groups)).toEqual(
      first.map((outcome) => processed(outcome).groups),
    );
    expect(await personOf(db.pool, teamId, 'anon-3')).toMatchObject({
      distinct_ids: ['anon-1', 'anon-2', 'anon-3', 'user-1'],
      properties: { email: 'a@example.com', first: 'x', m: 2, device: 'phone' },
    });
  });

  it('rejects a poison message with its reason and processes the rest of the batch', async () => {
    const good = captured(teamId, 'user-1', 'a', { properties: { $set: { a: 1 } } });
    const notJson = { ...captured(teamId, 'user-2', 'b'), data: '{"event": "b", "properties": {' };
    const arrayProperties = {
      ...captured(teamId, 'user-3', 'c'),
      data: JSON.stringify({ properties: [1, 2] }),
    };
    const badUuid = { ...captured(teamId, 'user-4', 'd'), uuid: 'not-a-uuid' };
    const unknownTeam = captured(2_000_000_000, 'user-5', 'e');
    const alsoGood = captured(teamId, 'user-1', 'f', { properties: { $set: { b: 2 } } });

    const outcomes = await processor.processBatch([
      good,
      notJson,
      arrayProperties,
      badUuid,
      unknownTeam,
      alsoGood,
    ]);

    expect(outcomes.map((outcome) => [outcome.outcome, 'reason' in outcome ? outcome.reason : null])).toEqual(
      [
        ['ok', null],
        ['dead_letter', 'invalid_event_data'],
        ['dead_letter', 'invalid_properties'],
        ['dead_letter', 'invalid_captured_event'],
        ['dropped', 'unknown_team'],
        ['ok', null],
      ],
    );
    expect(outcomes[1]).toMatchObject({
      uuid: notJson.uuid,
      teamId,
      detail: expect.stringContaining('not JSON'),
    });
    expect((await personOf(db.pool, teamId, 'user-1'))?.properties).toMatchObject({ a: 1, b: 2 });
    expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
  });

  it('stores ids and properties holding NUL or lone surrogates, which Postgres cannot take as sent', async () => {
    const distinctId = 'user\u0000\ud800';
    const event = captured(teamId, distinctId, 'a', {
      properties: { $set: { 'key\u0000': 'value\u0000', lone: 'x\udc00', pair: '😀', escaped: '\\u0000' } },
    });
    const [first] = await processor.processBatch([event]);
    const [again] = await processor.processBatch([captured(teamId, distinctId, 'b', {})]);

    expect(processed(first).distinctId).toBe('user\ufffd\ufffd');
    expect(processed(again).personId).toBe(processed(first).personId);
    expect((await personOf(db.pool, teamId, 'user\ufffd\ufffd'))?.properties).toMatchObject({
      'key\ufffd': 'value\ufffd',
      lone: 'x\ufffd',
      pair: '😀',
      escaped: '\\u0000',
    });
  });

  it('dead-letters only the event Postgres refuses, keeping the others in order', async () => {
    // Stands in for any value Postgres rejects that validation did not foresee.
    await db.pool.query(`
      CREATE OR REPLACE FUNCTION test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.properties ? 'poison' THEN
          RAISE EXCEPTION 'poisoned properties' USING ERRCODE = '22023';
        END IF;
        RETURN NEW;
      END $$`);
    await db.pool.query(
      `CREATE TRIGGER test_refuse_poison BEFORE INSERT OR UPDATE ON persons FOR EACH ROW EXECUTE FUNCTION test_refuse_poison()`,
    );
    try {
      const outcomes = await processor.processBatch([
        captured(teamId, 'user-1', 'a', { properties: { $set: { step: 1 } } }),
        captured(teamId, 'user-2', 'b', { properties: { $set: { poison: true } } }),
        captured(teamId, 'user-1', 'c', { properties: { $set: { step: 2 } } }),
      ]);
      expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['ok', 'dead_letter', 'ok']);
      expect(outcomes[1]).toMatchObject({ reason: 'postgres_rejected', detail: 'poisoned properties' });
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties.step).toBe(2);
      expect(await personOf(db.pool, teamId, 'user-2')).toBeNull();
    } finally {
      await db.pool.query(`DROP TRIGGER test_refuse_poison ON persons`);
    }
  });

  it('throws, committing nothing, when Postgres cannot be reached', async () => {
    const unreachable = new Pool({ connectionString: 'postgres://nobody:nothing@127.0.0.1:9/none', max: 1 });
    try {
      await expect(
        new PersonProcessor(unreachable).processBatch([captured(teamId, 'user-1', 'a')]),
      ).rejects.toThrow();
    } finally {
      await unreachable.end();
    }
  });

  it('throws when another process holds the person longer than the lock timeout, and succeeds once it let go', async () => {
    await processor.processBatch([captured(teamId, 'user-1', 'a', { properties: { $set: { n: 1 } } })]);
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM persons WHERE team_id = $1 FOR UPDATE`, [teamId]);
      const impatient = new PersonProcessor(db.pool, { lockTimeoutMs: 100, maxAttempts: 1 });
      await expect(
        impatient.processBatch([captured(teamId, 'user-1', 'b', { properties: { $set: { n: 2 } } })]),
      ).rejects.toMatchObject({ code: '55P03' });
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties.n).toBe(1);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    await processor.processBatch([captured(teamId, 'user-1', 'b', { properties: { $set: { n: 2 } } })]);
    expect((await personOf(db.pool, teamId, 'user-1'))?.properties.n).toBe(2);
  });

  it('keeps one person per user when two processes handle overlapping batches at once', async () => {
    const otherPool = new Pool({ connectionString: db.database.url, max: 2 });
    try {
      const otherProcessor = new PersonProcessor(otherPool);
      const users = Array.from({ length: 40 }, (_, index) => index);
      for (let round = 0; round < 3; round += 1) {
        const roundTeam = await db.createTeam();
        const identifies = users.map((index) =>
          captured(roundTeam, `user-${index}`, '$identify', {
            properties: { $anon_distinct_id: `anon-${index}`, $set: { identified: true } },
          }),
        );
        const pageviews = users.flatMap((index) => [
          captured(roundTeam, `anon-${index}`, '$pageview', { properties: { $set: { anon_seen: index } } }),
          captured(roundTeam, `user-${index}`, 'login', { properties: { $set: { user_seen: index } } }),
        ]);
        const aliases = [...users].reverse().map((index) =>
          captured(roundTeam, `user-${index}`, '$create_alias', {
            properties: { alias: `email-${index}` },
          }),
        );
        await Promise.all([
          processor.processBatch(identifies),
          otherProcessor.processBatch(pageviews),
          otherProcessor.processBatch(aliases),
        ]);

        for (const index of [0, 17, 39]) {
          const person = await personOf(db.pool, roundTeam, `anon-${index}`);
          expect(person?.distinct_ids).toEqual([`anon-${index}`, `email-${index}`, `user-${index}`]);
          expect(person?.properties).toMatchObject({ anon_seen: index, user_seen: index, identified: true });
        }
        expect(await countRows(db.pool, 'persons', roundTeam)).toBe(users.length);
        expect(await countRows(db.pool, 'person_distinct_ids', roundTeam)).toBe(users.length * 3);
      }
    } finally {
      await otherPool.end();
    }
  });

  it('moves every id of a merged person while another process writes through one of those ids', async () => {
    const otherPool = new Pool({ connectionString: db.database.url, max: 2 });
    try {
      const otherProcessor = new PersonProcessor(otherPool);
      const users = Array.from({ length: 20 }, (_, index) => index);
      // Each anonymous person also holds a device id that the merging batch never mentions.
      await processor.processBatch(
        users.flatMap((index) => [
          captured(teamId, `anon-${index}`, '$pageview', { properties: { $set: { anon: index } } }),
          captured(teamId, `user-${index}`, 'login', { properties: { $set: { user: index } } }),
        ]),
      );
      await db.pool.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
         SELECT team_id, 'device-' || substr(distinct_id, 6), person_id FROM person_distinct_ids
          WHERE team_id = $1 AND distinct_id LIKE 'anon-%'`,
        [teamId],
      );

      await Promise.all([
        processor.processBatch(
          users.map((index) =>
            captured(teamId, `user-${index}`, '$identify', {
              properties: { $anon_distinct_id: `anon-${index}` },
            }),
          ),
        ),
        otherProcessor.processBatch(
          [...users]
            .reverse()
            .map((index) =>
              captured(teamId, `device-${index}`, 'tap', { properties: { $set: { device: index } } }),
            ),
        ),
      ]);

      for (const index of users) {
        expect(await personOf(db.pool, teamId, `device-${index}`)).toMatchObject({
          distinct_ids: [`anon-${index}`, `device-${index}`, `user-${index}`],
          properties: { anon: index, user: index, device: index },
        });
      }
      expect(await countRows(db.pool, 'persons', teamId)).toBe(users.length);
    } finally {
      await otherPool.end();
    }
  });

  it('runs the batch again when it deadlocks with another process', async () => {
    await processor.processBatch([
      captured(teamId, 'anon-1', '$pageview', { properties: { $set: { anon: true } } }),
      captured(teamId, 'anon-1', '$create_alias', { properties: { alias: 'device-1' } }),
      captured(teamId, 'user-1', 'login', { properties: { $set: { user: true } } }),
    ]);
    await db.pool.query(`UPDATE persons SET is_identified = false WHERE team_id = $1`, [teamId]);
    const anonymous = await personOf(db.pool, teamId, 'anon-1');

    // Another process holds the device id (as a batch writing through it would), then waits for
    // the anonymous person that our merge has locked meanwhile: a lock cycle.
    const other = await db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `SELECT 1 FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'device-1' FOR UPDATE`,
        [teamId],
      );
      const merging = processor.processBatch([
        captured(teamId, 'user-1', '$identify', { properties: { $anon_distinct_id: 'anon-1' } }),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await other
        .query(`SELECT 1 FROM persons WHERE id = $1 FOR UPDATE`, [anonymous?.id])
        .catch(() => undefined);
      await other.query('ROLLBACK');

      const [outcome] = await merging;
      expect(outcome.outcome).toBe('ok');
    } finally {
      other.release();
    }
    expect((await personOf(db.pool, teamId, 'device-1'))?.distinct_ids).toEqual([
      'anon-1',
      'device-1',
      'user-1',
    ]);
    expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
  });

  it('gives a person created for an id another person’s UUID already holds a fresh UUID', async () => {
    // A person holding the UUID derived from "user-1" without holding "user-1" itself.
    await processor.processBatch([captured(teamId, 'user-1', 'a')]);
    await db.pool.query(`UPDATE person_distinct_ids SET distinct_id = 'renamed' WHERE team_id = $1`, [
      teamId,
    ]);

    const [outcome] = await processor.processBatch([captured(teamId, 'user-1', 'b')]);

    const person = await personOf(db.pool, teamId, 'user-1');
    expect(person?.uuid).not.toBe(personUuid(teamId, 'user-1'));
    expect(processed(outcome).personId).toBe(person?.uuid);
    expect(await countRows(db.pool, 'persons', teamId)).toBe(2);
  });
});
