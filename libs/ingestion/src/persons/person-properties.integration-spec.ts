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

describe('PersonProcessor: person properties (reference §2.3, §2.6) and personless events (§2.4)', () => {
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

  describe('$set, $set_once and $unset on any event', () => {
    it('creates the person with $set_once and $set, $set winning on a shared key', async () => {
      const [outcome] = await send([
        teamId,
        'user-1',
        'signed up',
        {
          properties: {
            $set: { plan: 'pro', name: 'Ada' },
            $set_once: { plan: 'free', first_seen: 'today' },
          },
        },
      ]);
      const person = await personOf(db.pool, teamId, 'user-1');
      expect(person).toMatchObject({
        uuid: personUuid(teamId, 'user-1'),
        is_identified: false,
        properties: {
          plan: 'pro',
          name: 'Ada',
          first_seen: 'today',
          $creator_event_uuid: processed(outcome).uuid,
        },
        properties_last_operation: { plan: 'set', name: 'set', first_seen: 'set_once' },
        version: 0,
      });
    });

    it('never lets $set_once overwrite, and lets a later $set overwrite', async () => {
      await send([teamId, 'user-1', 'a', { properties: { $set_once: { source: 'ad', kept: 1 } } }]);
      await send(
        [teamId, 'user-1', 'b', { properties: { $set_once: { source: 'organic', added: 2 } } }],
        [teamId, 'user-1', 'c', { properties: { $set: { kept: 3 } } }],
      );
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties).toMatchObject({
        source: 'ad',
        added: 2,
        kept: 3,
      });
    });

    it('unsets keys given as an array or as an object, and ignores keys the person lacks', async () => {
      await send([teamId, 'user-1', 'a', { properties: { $set: { a: 1, b: 2, c: 3, d: 4 } } }]);
      await send(
        [teamId, 'user-1', '$set', { properties: { $unset: ['a', 'missing', 42] } }],
        [teamId, 'user-1', '$set', { properties: { $unset: { b: null } } }],
      );
      const person = await personOf(db.pool, teamId, 'user-1');
      expect(person?.properties).toEqual({ c: 3, d: 4, $creator_event_uuid: expect.any(String) });
      expect(person?.properties_last_operation).toEqual({ c: 'set', d: 'set' });
    });

    it('takes top-level $set and $set_once (the /engage form), over the ones in properties', async () => {
      await send([
        teamId,
        'user-1',
        '$identify',
        {
          properties: { $set: { a: 'inner', b: 'inner' } },
          raw: { $set: { a: 'top' }, $set_once: { c: 'once' } },
        },
      ]);
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties).toMatchObject({
        a: 'top',
        b: 'inner',
        c: 'once',
      });
    });

    it('stores property names like "__proto__" and "toString" as ordinary keys', async () => {
      await send([teamId, 'user-1', 'a', { properties: { $set: { name: 'x' } } }]);
      const [outcome] = await processor.processBatch([
        {
          ...captured(teamId, 'user-1', 'b'),
          data: '{"properties": {"$set": {"__proto__": {"admin": true}}, "$set_once": {"toString": "once"}}}',
        },
      ]);
      await send([teamId, 'user-1', 'c', { properties: { $set_once: { toString: 'twice' } } }]);
      const person = await personOf(db.pool, teamId, 'user-1');
      expect(Object.keys(person?.properties ?? {}).sort()).toEqual([
        '$creator_event_uuid',
        '__proto__',
        'name',
        'toString',
      ]);
      expect(person?.properties).toHaveProperty('toString', 'once');
      expect(Object.getPrototypeOf(processed(outcome).personProperties)).toBe(Object.prototype);
    });

    it('gives each event the person properties right after it', async () => {
      const outcomes = await send(
        [teamId, 'user-1', 'a', { properties: { $set: { n: 1 } } }],
        [teamId, 'user-1', 'b', { properties: { $set: { n: 2 } } }],
        [teamId, 'user-1', 'c', {}],
      );
      expect(outcomes.map((outcome) => processed(outcome).personProperties.n)).toEqual([1, 2, 2]);
    });

    it('writes a person once per batch and moves its version by one', async () => {
      await send([teamId, 'user-1', 'a', { properties: { $set: { n: 0 } } }]);
      await send(
        [teamId, 'user-1', 'a', { properties: { $set: { n: 1 } } }],
        [teamId, 'user-1', 'b', { properties: { $set: { n: 2 } } }],
        [teamId, 'user-1', 'c', { properties: { $set: { m: 1 } } }],
      );
      expect(await personOf(db.pool, teamId, 'user-1')).toMatchObject({
        version: 1,
        properties: { n: 2, m: 1 },
      });
      await send([teamId, 'user-1', 'd', { properties: { $set: { n: 2 } } }]);
      expect((await personOf(db.pool, teamId, 'user-1'))?.version).toBe(1);
    });

    it('ignores $set from $exception events, as PostHog does', async () => {
      await send([teamId, 'user-1', 'a', { properties: { $set: { n: 1 } } }]);
      await send([teamId, 'user-1', '$exception', { properties: { $set: { n: 2 } } }]);
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties.n).toBe(1);
    });
  });

  describe('automatic person properties', () => {
    it('copies browser and campaign properties to the person, the first touch to $initial_ ones', async () => {
      await send([
        teamId,
        'anon-1',
        '$pageview',
        {
          properties: {
            $current_url: 'https://a.example/?utm_source=news',
            utm_source: 'news',
            $browser: 'Firefox',
          },
        },
      ]);
      await send([
        teamId,
        'anon-1',
        '$pageview',
        { properties: { $current_url: 'https://a.example/pricing', utm_source: 'ads', $browser: 'Firefox' } },
      ]);
      expect((await personOf(db.pool, teamId, 'anon-1'))?.properties).toMatchObject({
        $initial_current_url: 'https://a.example/?utm_source=news',
        $initial_utm_source: 'news',
        $initial_browser: 'Firefox',
        utm_source: 'ads',
        $current_url: 'https://a.example/pricing',
      });
    });

    it('does not write a person for a change of volatile properties alone', async () => {
      await send([teamId, 'anon-1', '$pageview', { properties: { $current_url: 'https://a.example/1' } }]);
      const [outcome] = await send([
        teamId,
        'anon-1',
        '$pageview',
        { properties: { $current_url: 'https://a.example/2' } },
      ]);
      expect(await personOf(db.pool, teamId, 'anon-1')).toMatchObject({
        version: 0,
        properties: { $current_url: 'https://a.example/1' },
      });
      // The event still shows the current URL it set.
      expect(processed(outcome).personProperties.$current_url).toBe('https://a.example/2');
    });

    it('adds the automatic properties to the stored event’s $set and $set_once too', async () => {
      const [outcome] = await send([
        teamId,
        'anon-1',
        '$pageview',
        { properties: { $os: 'Mac OS X', $set: { $os: 'custom' } } },
      ]);
      expect(processed(outcome).properties).toMatchObject({
        $set: { $os: 'custom' },
        $set_once: { $initial_os: 'Mac OS X' },
      });
    });
  });

  describe('$process_person_profile: false', () => {
    it('touches no person: the event gets the distinct id’s deterministic UUID and no properties', async () => {
      const [outcome] = await send([
        teamId,
        'anon-1',
        '$pageview',
        {
          properties: {
            $process_person_profile: false,
            $set: { a: 1 },
            $set_once: { b: 1 },
            $unset: ['c'],
            $groups: { company: 'acme' },
            $group_0: 'acme',
            $current_url: 'https://a.example',
          },
        },
      ]);
      expect(await countRows(db.pool, 'persons', teamId)).toBe(0);
      expect(await countRows(db.pool, 'group_type_mappings', teamId)).toBe(0);
      expect(processed(outcome)).toMatchObject({
        personId: personUuid(teamId, 'anon-1'),
        personProperties: {},
        personCreatedAt: '1970-01-01T00:00:05.000Z',
        personMode: 'propertyless',
        groups: [null, null, null, null, null],
        properties: {
          $process_person_profile: false,
          $groups: { company: 'acme' },
          $current_url: 'https://a.example',
        },
      });
      expect(processed(outcome).properties).not.toHaveProperty('$set');
      expect(processed(outcome).properties).not.toHaveProperty('$group_0');
    });

    it('uses the existing person’s UUID without its properties, force_upgrade once a minute past its creation', async () => {
      await send([
        teamId,
        'user-1',
        'signed up',
        { properties: { $set: { a: 1 } }, timestamp: '2024-06-01T00:00:00.000Z' },
      ]);
      const person = await personOf(db.pool, teamId, 'user-1');
      const [soon, later] = await send(
        [
          teamId,
          'user-1',
          'a',
          {
            properties: { $process_person_profile: false, $set: { a: 2 } },
            timestamp: '2024-06-01T00:00:30.000Z',
          },
        ],
        [
          teamId,
          'user-1',
          'b',
          { properties: { $process_person_profile: false }, timestamp: '2024-06-01T00:05:00.000Z' },
        ],
      );
      expect(processed(soon)).toMatchObject({
        personId: person?.uuid,
        personProperties: {},
        personMode: 'propertyless',
      });
      expect(processed(later)).toMatchObject({
        personId: person?.uuid,
        personMode: 'force_upgrade',
        personCreatedAt: '2024-06-01T00:00:00.000Z',
      });
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties.a).toBe(1);
    });

    it.each(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify'])(
      'drops %s sent without person processing',
      async (event) => {
        const [outcome] = await send([
          teamId,
          'user-1',
          event,
          {
            properties: {
              $process_person_profile: false,
              $anon_distinct_id: 'anon-1',
              alias: 'anon-1',
              $group_type: 'company',
              $group_key: 'acme',
            },
          },
        ]);
        expect(outcome).toMatchObject({
          outcome: 'dropped',
          reason: 'invalid_event_when_process_person_profile_is_false',
        });
        expect(await countRows(db.pool, 'persons', teamId)).toBe(0);
        expect(await countRows(db.pool, 'groups', teamId)).toBe(0);
      },
    );

    it('processes the person with a warning when the flag is not a boolean', async () => {
      const [outcome] = await send([
        teamId,
        'user-1',
        'a',
        { properties: { $process_person_profile: 'false', $set: { a: 1 } } },
      ]);
      expect(processed(outcome)).toMatchObject({
        personMode: 'full',
        warnings: [{ type: 'invalid_process_person_profile', details: { $process_person_profile: 'false' } }],
      });
      expect(processed(outcome).properties).not.toHaveProperty('$process_person_profile');
      expect((await personOf(db.pool, teamId, 'user-1'))?.properties.a).toBe(1);
    });
  });
});
