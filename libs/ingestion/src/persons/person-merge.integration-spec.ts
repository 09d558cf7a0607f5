import {
  captured,
  countRows,
  createIngestionTestDatabase,
  IngestionTestDatabase,
  personOf,
  processed,
} from '../testing/ingestion-test.util';
import { PersonProcessor } from './person-processor.service';
import { personUuid } from './person-uuid.util';

describe('PersonProcessor: identify, alias and merge (reference §2.2)', () => {
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

  const send = (...events: Parameters<typeof captured>[]) =>
    processor.processBatch(events.map((args) => captured(...args)));

  describe('$identify with $anon_distinct_id', () => {
    it('creates one identified person with both ids when neither has a person, its UUID from the event id', async () => {
      const [outcome] = await send([
        teamId,
        'user-1',
        '$identify',
        {
          properties: {
            $anon_distinct_id: 'anon-1',
            $set: { email: 'a@example.com' },
            $set_once: { plan: 'free' },
          },
        },
      ]);

      const person = await personOf(db.pool, teamId, 'user-1');
      expect(person).toMatchObject({
        uuid: personUuid(teamId, 'user-1'),
        is_identified: true,
        distinct_ids: ['anon-1', 'user-1'],
        properties: { email: 'a@example.com', plan: 'free', $creator_event_uuid: processed(outcome).uuid },
      });
      expect(processed(outcome).personId).toBe(person?.uuid);
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
    });

    it('adds the identified id to the anonymous person when only the anonymous id has one', async () => {
      await send([teamId, 'anon-1', '$pageview', { properties: { $set: { seen: true } } }]);
      const anonymous = await personOf(db.pool, teamId, 'anon-1');

      const [outcome] = await send([
        teamId,
        'user-1',
        '$identify',
        { properties: { $anon_distinct_id: 'anon-1', $set: { email: 'a@example.com' } } },
      ]);

      const person = await personOf(db.pool, teamId, 'user-1');
      expect(person).toMatchObject({
        uuid: anonymous?.uuid,
        is_identified: true,
        distinct_ids: ['anon-1', 'user-1'],
        properties: { seen: true, email: 'a@example.com' },
      });
      expect(processed(outcome).personId).toBe(anonymous?.uuid);
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
    });

    it('adds the anonymous id to the identified person when only the event id has one', async () => {
      await send([teamId, 'user-1', 'signed up', { properties: { $set: { email: 'a@example.com' } } }]);
      const existing = await personOf(db.pool, teamId, 'user-1');

      await send([teamId, 'user-1', '$identify', { properties: { $anon_distinct_id: 'anon-1' } }]);

      expect(await personOf(db.pool, teamId, 'anon-1')).toMatchObject({
        uuid: existing?.uuid,
        is_identified: true,
        distinct_ids: ['anon-1', 'user-1'],
      });
    });

    it('merges the anonymous person into the event id person, whose properties win on conflicts', async () => {
      await send(
        [
          teamId,
          'anon-1',
          '$pageview',
          { properties: { $set: { color: 'red', from_anon: 1 } }, timestamp: '2024-01-01T00:00:00.000Z' },
        ],
        [teamId, 'user-1', 'login', { properties: { $set: { color: 'blue', from_user: 1 } } }],
      );
      // A third id of the anonymous person that the merging batch never mentions.
      await send([teamId, 'anon-1', '$create_alias', { properties: { alias: 'device-9' } }]);
      const anonymous = await personOf(db.pool, teamId, 'anon-1');
      const user = await personOf(db.pool, teamId, 'user-1');
      expect(anonymous?.distinct_ids).toEqual(['anon-1', 'device-9']);
      // Aliasing marked the anonymous person identified: turn it back so the merge is allowed.
      await db.pool.query(`UPDATE persons SET is_identified = false, version = 7 WHERE uuid = $1`, [
        anonymous?.uuid,
      ]);

      const [outcome] = await send([
        teamId,
        'user-1',
        '$identify',
        { properties: { $anon_distinct_id: 'anon-1', $set: { email: 'a@example.com' } } },
      ]);

      const merged = await personOf(db.pool, teamId, 'anon-1');
      expect(merged).toMatchObject({
        uuid: user?.uuid,
        is_identified: true,
        distinct_ids: ['anon-1', 'device-9', 'user-1'],
        properties: { color: 'blue', from_anon: 1, from_user: 1, email: 'a@example.com' },
        created_at: new Date('2024-01-01T00:00:00.000Z'),
        version: 8,
      });
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
      expect(processed(outcome)).toMatchObject({
        personId: user?.uuid,
        personProperties: { color: 'blue', from_anon: 1, email: 'a@example.com' },
        warnings: [],
      });
    });

    it('refuses to merge an already identified person, and still applies the event to its own person', async () => {
      await send(
        [teamId, 'user-a', '$identify', { properties: { $anon_distinct_id: 'anon-a' } }],
        [teamId, 'user-b', 'login', { properties: { $set: { name: 'B' } } }],
      );
      const first = await personOf(db.pool, teamId, 'user-a');

      const [outcome] = await send([
        teamId,
        'user-b',
        '$identify',
        { properties: { $anon_distinct_id: 'user-a', $set: { email: 'b@example.com' } } },
      ]);

      expect(await personOf(db.pool, teamId, 'user-a')).toEqual(first);
      expect(await personOf(db.pool, teamId, 'user-b')).toMatchObject({
        distinct_ids: ['user-b'],
        is_identified: true,
        properties: { name: 'B', email: 'b@example.com' },
      });
      expect(await countRows(db.pool, 'persons', teamId)).toBe(2);
      expect(processed(outcome).warnings).toEqual([
        {
          type: 'cannot_merge_already_identified',
          details: {
            sourcePersonDistinctId: 'user-a',
            targetPersonDistinctId: 'user-b',
            eventUuid: expect.any(String),
          },
        },
      ]);
    });

    it('does nothing but a property update when $anon_distinct_id equals the distinct id', async () => {
      await send([
        teamId,
        'user-1',
        '$identify',
        { properties: { $anon_distinct_id: 'user-1', $set: { a: 1 } } },
      ]);
      expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
        distinct_ids: ['user-1'],
        is_identified: false,
        properties: { a: 1 },
      });
    });

    it('treats $identify without $anon_distinct_id (posthog-node identify) as a property update that does not identify', async () => {
      await send([teamId, 'user-1', '$identify', { properties: { $set: { email: 'a@example.com' } } }]);
      expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
        is_identified: false,
        distinct_ids: ['user-1'],
        properties: { email: 'a@example.com' },
      });
    });
  });

  describe('illegal distinct ids', () => {
    it.each([
      'null',
      'undefined',
      'UNDEFINED',
      'Anonymous',
      'guest',
      '"guest"',
      "'distinct_id'",
      'NaN',
      'None',
      '0',
      '[object Object]',
      '   ',
      'not_authenticated',
      'EMAIL',
      'True',
    ])('refuses to merge with the illegal anonymous id %j', async (illegal) => {
      await send([teamId, illegal, '$pageview', {}]);
      const [outcome] = await send([
        teamId,
        'user-1',
        '$identify',
        { properties: { $anon_distinct_id: illegal, $set: { a: 1 } } },
      ]);

      expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
        distinct_ids: ['user-1'],
        is_identified: false,
        properties: { a: 1 },
      });
      expect((await personOf(db.pool, teamId, illegal))?.distinct_ids).toEqual([illegal]);
      expect(processed(outcome).warnings).toEqual([
        {
          type: 'cannot_merge_with_illegal_distinct_id',
          details: { illegalDistinctId: illegal, otherDistinctId: 'user-1', eventUuid: expect.any(String) },
        },
      ]);
    });

    it.each(['nan', 'none_of_these', 'Null', 'user-0'])(
      'merges with %j, which is not illegal as written',
      async (id) => {
        await send([teamId, 'user-1', '$identify', { properties: { $anon_distinct_id: id } }]);
        expect((await personOf(db.pool, teamId, 'user-1'))?.distinct_ids).toEqual([id, 'user-1'].sort());
      },
    );

    it('refuses an alias sent from an illegal distinct id', async () => {
      const [outcome] = await send([
        teamId,
        'anonymous',
        '$create_alias',
        { properties: { alias: 'user-1' } },
      ]);
      expect(await personOf(db.pool, teamId, 'user-1')).toBeNull();
      expect(await personOf(db.pool, teamId, 'anonymous')).toMatchObject({
        distinct_ids: ['anonymous'],
        is_identified: false,
      });
      expect(processed(outcome).warnings[0]).toMatchObject({
        type: 'cannot_merge_with_illegal_distinct_id',
        details: { illegalDistinctId: 'anonymous', otherDistinctId: 'user-1' },
      });
    });

    it('refuses $anon_distinct_id: null, which PostHog stringifies to the illegal "null"', async () => {
      await send([teamId, 'user-1', '$identify', { properties: { $anon_distinct_id: null } }]);
      expect(await personOf(db.pool, teamId, 'null')).toBeNull();
      expect((await personOf(db.pool, teamId, 'user-1'))?.distinct_ids).toEqual(['user-1']);
    });

    it('refuses an alias longer than a distinct id can be, without failing the batch', async () => {
      const [outcome, next] = await send(
        [teamId, 'user-1', '$create_alias', { properties: { alias: 'x'.repeat(401) } }],
        [teamId, 'user-2', '$pageview', {}],
      );
      expect(processed(outcome).warnings[0].type).toBe('cannot_merge_with_illegal_distinct_id');
      expect((await personOf(db.pool, teamId, 'user-1'))?.distinct_ids).toEqual(['user-1']);
      expect(next.outcome).toBe('ok');
    });
  });

  describe('$create_alias (interface spec: the sender’s id is merged into the alias)', () => {
    it("merges the sender's person into the alias's person, which survives", async () => {
      await send(
        [teamId, 'anon-1', '$pageview', { properties: { $set: { landing: '/pricing', shared: 'anon' } } }],
        [teamId, 'user-1', 'login', { properties: { $set: { email: 'a@example.com', shared: 'user' } } }],
      );
      const user = await personOf(db.pool, teamId, 'user-1');

      const [outcome] = await send([
        teamId,
        'anon-1',
        '$create_alias',
        { properties: { distinct_id: 'anon-1', alias: 'user-1', $set: { plan: 'pro' } } },
      ]);

      expect(await personOf(db.pool, teamId, 'anon-1')).toMatchObject({
        uuid: user?.uuid,
        is_identified: true,
        distinct_ids: ['anon-1', 'user-1'],
        properties: { landing: '/pricing', email: 'a@example.com', shared: 'user', plan: 'pro' },
      });
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
      expect(processed(outcome)).toMatchObject({
        distinctId: 'anon-1',
        personId: user?.uuid,
        personProperties: { landing: '/pricing', email: 'a@example.com', shared: 'user', plan: 'pro' },
        warnings: [],
      });
    });

    it('keeps the alias’s person whichever id looks anonymous, unlike PostHog', async () => {
      await send(
        [teamId, 'anon-1', '$pageview', { properties: { $set: { shared: 'anon' } } }],
        [teamId, 'user-1', 'login', { properties: { $set: { shared: 'user' } } }],
      );
      const anonymous = await personOf(db.pool, teamId, 'anon-1');

      const [outcome] = await send([teamId, 'user-1', '$create_alias', { properties: { alias: 'anon-1' } }]);

      expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
        uuid: anonymous?.uuid,
        distinct_ids: ['anon-1', 'user-1'],
        properties: { shared: 'anon' },
      });
      expect(processed(outcome).personId).toBe(anonymous?.uuid);
    });

    it('creates one identified person with both ids when neither has one, its UUID from the alias', async () => {
      const [outcome] = await send([teamId, 'anon-1', '$create_alias', { properties: { alias: 'user-1' } }]);
      expect(await personOf(db.pool, teamId, 'anon-1')).toMatchObject({
        uuid: personUuid(teamId, 'user-1'),
        distinct_ids: ['anon-1', 'user-1'],
        is_identified: true,
      });
      expect(processed(outcome).personId).toBe(personUuid(teamId, 'user-1'));
    });

    it('gives an unknown alias to the sender’s person', async () => {
      await send([teamId, 'user-1', 'login', {}]);
      await send([teamId, 'user-1', '$create_alias', { properties: { alias: 'user@example.com' } }]);
      expect(await personOf(db.pool, teamId, 'user@example.com')).toMatchObject({
        uuid: personUuid(teamId, 'user-1'),
        distinct_ids: ['user-1', 'user@example.com'],
        is_identified: true,
      });
    });

    it('gives an unknown sender id to the alias’s person', async () => {
      await send([teamId, 'user-1', 'login', {}]);
      const [outcome] = await send([
        teamId,
        'device-1',
        '$create_alias',
        { properties: { alias: 'user-1' } },
      ]);
      expect(await personOf(db.pool, teamId, 'device-1')).toMatchObject({
        uuid: personUuid(teamId, 'user-1'),
        distinct_ids: ['device-1', 'user-1'],
        is_identified: true,
      });
      expect(processed(outcome).personId).toBe(personUuid(teamId, 'user-1'));
    });

    it('merges the sender’s person into an alias person that is already identified', async () => {
      await send(
        [teamId, 'user-a', '$identify', { properties: { $anon_distinct_id: 'anon-a' } }],
        [teamId, 'user-b', 'login', {}],
      );
      const identified = await personOf(db.pool, teamId, 'user-a');
      const [outcome] = await send([teamId, 'user-b', '$create_alias', { properties: { alias: 'user-a' } }]);
      expect(await personOf(db.pool, teamId, 'user-b')).toMatchObject({
        uuid: identified?.uuid,
        distinct_ids: ['anon-a', 'user-a', 'user-b'],
      });
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
      expect(processed(outcome).warnings).toEqual([]);
    });

    it('refuses to merge a sender whose person is already identified, keeping the event on it', async () => {
      await send(
        [teamId, 'user-a', '$identify', { properties: { $anon_distinct_id: 'anon-a' } }],
        [teamId, 'user-b', 'login', {}],
      );
      const sender = await personOf(db.pool, teamId, 'user-a');
      const [outcome] = await send([
        teamId,
        'user-a',
        '$create_alias',
        { properties: { alias: 'user-b', $set: { a: 1 } } },
      ]);
      expect(await personOf(db.pool, teamId, 'user-a')).toMatchObject({
        distinct_ids: ['anon-a', 'user-a'],
        properties: { a: 1 },
      });
      expect(await personOf(db.pool, teamId, 'user-b')).toMatchObject({
        distinct_ids: ['user-b'],
        is_identified: false,
      });
      expect(processed(outcome)).toMatchObject({
        personId: sender?.uuid,
        warnings: [
          {
            type: 'cannot_merge_already_identified',
            details: {
              sourcePersonDistinctId: 'user-a',
              targetPersonDistinctId: 'user-b',
              eventUuid: expect.any(String),
            },
          },
        ],
      });
    });

    it.each(['null', 'anonymous', 'Guest', '"undefined"', '0', '   '])(
      'refuses the illegal alias %j, keeping the event on the sender’s person',
      async (alias) => {
        await send([teamId, alias, '$pageview', {}]);
        const [outcome] = await send([
          teamId,
          'user-1',
          '$create_alias',
          { properties: { alias, $set: { a: 1 } } },
        ]);
        expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
          distinct_ids: ['user-1'],
          is_identified: false,
          properties: { a: 1 },
        });
        expect((await personOf(db.pool, teamId, alias))?.distinct_ids).toEqual([alias]);
        expect(processed(outcome)).toMatchObject({
          personId: personUuid(teamId, 'user-1'),
          warnings: [
            {
              type: 'cannot_merge_with_illegal_distinct_id',
              details: { illegalDistinctId: alias, otherDistinctId: 'user-1', eventUuid: expect.any(String) },
            },
          ],
        });
      },
    );

    it('is a plain event without an alias property', async () => {
      await send([teamId, 'user-1', '$create_alias', { properties: { $set: { a: 1 } } }]);
      expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
        distinct_ids: ['user-1'],
        is_identified: false,
      });
    });
  });

  describe('$merge_dangerously', () => {
    it('merges even an identified person into the sender’s person', async () => {
      await send(
        [
          teamId,
          'user-a',
          '$identify',
          { properties: { $anon_distinct_id: 'anon-a', $set: { a: 1, both: 'a' } } },
        ],
        [
          teamId,
          'user-b',
          '$identify',
          { properties: { $anon_distinct_id: 'anon-b', $set: { b: 1, both: 'b' } } },
        ],
      );
      const survivor = await personOf(db.pool, teamId, 'user-b');

      const [outcome] = await send([
        teamId,
        'user-b',
        '$merge_dangerously',
        { properties: { alias: 'user-a' } },
      ]);

      expect(await personOf(db.pool, teamId, 'anon-a')).toMatchObject({
        uuid: survivor?.uuid,
        distinct_ids: ['anon-a', 'anon-b', 'user-a', 'user-b'],
        properties: { a: 1, b: 1, both: 'b' },
        is_identified: true,
      });
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
      expect(processed(outcome).warnings).toEqual([]);
    });
  });

  describe('within one batch', () => {
    it('applies identify then alias in order, ending with one person holding every id', async () => {
      const outcomes = await send(
        [teamId, 'anon-1', '$pageview', { properties: { $set: { step: 1 } } }],
        [teamId, 'anon-2', '$pageview', { properties: { $set: { other_device: true } } }],
        [teamId, 'user-1', '$identify', { properties: { $anon_distinct_id: 'anon-1', $set: { step: 2 } } }],
        [teamId, 'anon-2', '$create_alias', { properties: { alias: 'user-1' } }],
        [teamId, 'anon-2', 'clicked', {}],
      );

      const person = await personOf(db.pool, teamId, 'user-1');
      expect(person).toMatchObject({
        uuid: personUuid(teamId, 'anon-1'),
        distinct_ids: ['anon-1', 'anon-2', 'user-1'],
        properties: { step: 2, other_device: true },
        is_identified: true,
      });
      expect(await countRows(db.pool, 'persons', teamId)).toBe(1);
      // Each event carries the person as it was right after it.
      const [first, second, identify, alias, last] = outcomes.map(processed);
      expect(first.personProperties).toMatchObject({ step: 1 });
      expect(second.personId).toBe(personUuid(teamId, 'anon-2'));
      expect(identify.personProperties).toMatchObject({ step: 2 });
      expect(identify.personProperties).not.toHaveProperty('other_device');
      expect(alias.personProperties).toMatchObject({ step: 2, other_device: true });
      expect(last.personId).toBe(person?.uuid);
    });

    it('refuses the alias once the identify of the same batch identified the sender’s person', async () => {
      const outcomes = await send(
        [teamId, 'user-b', 'login', {}],
        [teamId, 'user-a', '$identify', { properties: { $anon_distinct_id: 'anon-a' } }],
        [teamId, 'user-a', '$create_alias', { properties: { alias: 'user-b' } }],
      );
      expect((await personOf(db.pool, teamId, 'user-a'))?.distinct_ids).toEqual(['anon-a', 'user-a']);
      expect((await personOf(db.pool, teamId, 'user-b'))?.distinct_ids).toEqual(['user-b']);
      expect(processed(outcomes[2]).warnings[0].type).toBe('cannot_merge_already_identified');
    });

    it('keeps projects apart: the same distinct id in two projects is two persons', async () => {
      const otherTeamId = await db.createTeam();
      await send(
        [teamId, 'user-1', '$identify', { properties: { $anon_distinct_id: 'anon-1' } }],
        [otherTeamId, 'anon-1', '$pageview', {}],
      );
      expect((await personOf(db.pool, teamId, 'anon-1'))?.distinct_ids).toEqual(['anon-1', 'user-1']);
      expect(await personOf(db.pool, otherTeamId, 'anon-1')).toMatchObject({
        uuid: personUuid(otherTeamId, 'anon-1'),
        distinct_ids: ['anon-1'],
      });
    });
  });
});
