import type { ParsedEvent } from '../events/parse-captured-event.util';
import { GroupTypeIndexes } from '../groups/group-types.util';
import { GroupWrites } from '../groups/group-writes.state';
import { LoadedPerson, PersonBatchState, PersonRecord } from './person-batch.state';
import { distinctIdsToLoad, mergeRequestOf, PersonEventApplier } from './person-event-applier.util';
import { personUuid } from './person-uuid.util';

const TEAM = 5;
let sequence = 0;

function event(
  distinctId: string,
  name: string,
  properties: Record<string, unknown> = {},
  processPerson = true,
): ParsedEvent {
  sequence += 1;
  return {
    uuid: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    teamId: TEAM,
    distinctId,
    event: name,
    timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, sequence)).toISOString(),
    timestampMs: Date.UTC(2024, 0, 1, 0, 0, sequence),
    properties,
    processPerson,
    warnings: [],
  };
}

function loadedPerson(id: string, distinctId: string, overrides: Partial<LoadedPerson> = {}): LoadedPerson {
  return {
    id,
    uuid: personUuid(TEAM, distinctId),
    teamId: TEAM,
    properties: {},
    propertiesLastUpdatedAt: {},
    propertiesLastOperation: {},
    isIdentified: false,
    createdAt: new Date('2023-01-01T00:00:00Z'),
    version: 3,
    ...overrides,
  };
}

function setUp(persons: LoadedPerson[], distinctIds: [distinctId: string, personId: string][]) {
  const state = new PersonBatchState();
  state.load(
    persons,
    distinctIds.map(([distinctId, personId]) => ({ teamId: TEAM, distinctId, personId })),
  );
  const applier = new PersonEventApplier(state, new GroupTypeIndexes([]), new GroupWrites());
  return { state, applier };
}

/** The distinct ids a person holds in the batch state, sorted. */
function distinctIdsOf(person: PersonRecord | undefined): string[] {
  return [...(person?.distinctIdKeys ?? [])].map((key) => key.slice(`${TEAM}:`.length)).sort();
}

describe('PersonEventApplier with PersonBatchState', () => {
  it('plans chained merges of one batch as moves to the final survivor', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'a'), loadedPerson('2', 'b', { version: 9 }), loadedPerson('3', 'c')],
      [
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
      ],
    );
    applier.apply(event('b', '$identify', { $anon_distinct_id: 'a' }));
    // b's person is identified by now: only $merge_dangerously may merge it.
    applier.apply(event('c', '$merge_dangerously', { alias: 'b' }));

    const plan = state.plan();
    expect(plan.merges.map(({ from, into }) => [from.id, into.id])).toEqual([
      ['1', '3'],
      ['2', '3'],
    ]);
    expect(plan.updates.map((person) => [person.id, person.version, person.isIdentified])).toEqual([
      ['3', 11, true],
    ]);
    expect(plan.inserts).toEqual([]);
    expect(state.find(TEAM, 'a')?.id).toBe('3');
  });

  it('never inserts a person created and merged away within the batch', () => {
    const { state, applier } = setUp([loadedPerson('1', 'user')], [['user', '1']]);
    applier.apply(event('anon', '$pageview', { $set: { from_anon: true } }));
    applier.apply(event('user', '$identify', { $anon_distinct_id: 'anon' }));

    const plan = state.plan();
    expect(plan.inserts).toEqual([]);
    expect(plan.merges).toEqual([]);
    expect(plan.newDistinctIds.map((row) => [row.distinctId, row.person.id])).toEqual([['anon', '1']]);
    expect(plan.updates[0].properties).toMatchObject({ from_anon: true });
  });

  it('writes nothing when the batch’s changes cancel out', () => {
    const { state, applier } = setUp([loadedPerson('1', 'user', { properties: { a: 1 } })], [['user', '1']]);
    applier.apply(event('user', '$set', { $set: { b: 2 } }));
    applier.apply(event('user', '$set', { $unset: ['b'] }));
    expect(state.plan().updates).toEqual([]);
  });

  it('gives a personless event the person of its distinct id without touching it', () => {
    const { state, applier } = setUp([loadedPerson('1', 'user', { properties: { a: 1 } })], [['user', '1']]);
    const result = applier.apply(event('user', 'x', { $set: { a: 2 } }, false));
    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'user'),
      personProperties: {},
      personMode: 'force_upgrade',
    });
    expect(state.plan().updates).toEqual([]);
  });

  it("keeps the parsed event's properties as they are: shared when nothing is added, copied for $group_N", () => {
    const state = new PersonBatchState();
    const groupTypes = new GroupTypeIndexes([{ teamId: TEAM, groupType: 'company', groupTypeIndex: 0 }]);
    const applier = new PersonEventApplier(state, groupTypes, new GroupWrites());
    const plain = event('grouped-user', 'viewed', { page: 'a' });
    const grouped = event('grouped-user', 'viewed', { page: 'b', $groups: { company: 'acme' } });

    const plainRow = applier.apply(plain);
    const groupedRow = applier.apply(grouped);

    expect(plainRow.properties).toBe(plain.properties);
    expect(groupedRow.properties).toEqual({ page: 'b', $groups: { company: 'acme' }, $group_0: 'acme' });
    expect(groupedRow.groups).toEqual(['acme', null, null, null, null]);
    expect(grouped.properties).toEqual({ page: 'b', $groups: { company: 'acme' } });
  });

  it('loads the other side of a merge only when the merge may happen', () => {
    const ids = distinctIdsToLoad([
      event('user', '$identify', { $anon_distinct_id: 'anon' }),
      event('user', '$create_alias', { alias: 'null' }),
      event('user', '$merge_dangerously', { alias: 'other' }),
      event('personless', 'x', { $anon_distinct_id: 'ignored' }, false),
      event('guest', '$identify', { $anon_distinct_id: 'not-loaded' }),
      event('device', '$create_alias', { alias: 'main' }),
      event('anonymous', '$create_alias', { alias: 'not-loaded' }),
      event('sender', '$create_alias', { alias: 'x'.repeat(401) }),
      event('personless-alias', '$create_alias', { alias: 'not-loaded' }, false),
    ]).map((ref) => ref.distinctId);
    expect(ids).toEqual([
      'user',
      'anon',
      'other',
      'personless',
      'guest',
      'device',
      'main',
      'anonymous',
      'sender',
      'personless-alias',
    ]);
  });
});

describe('mergeRequestOf', () => {
  it('merges into the alias for $create_alias (interface spec), into the sender otherwise (PostHog)', () => {
    expect(mergeRequestOf(event('device', '$create_alias', { alias: 'main' }))).toEqual({
      otherDistinctId: 'device',
      intoDistinctId: 'main',
    });
    expect(mergeRequestOf(event('main', '$merge_dangerously', { alias: 'device' }))).toEqual({
      otherDistinctId: 'device',
      intoDistinctId: 'main',
    });
    expect(mergeRequestOf(event('main', '$identify', { $anon_distinct_id: 'device' }))).toEqual({
      otherDistinctId: 'device',
      intoDistinctId: 'main',
    });
  });

  it('stringifies the alias as PostHog does, and ignores a falsy one', () => {
    expect(mergeRequestOf(event('device', '$create_alias', { alias: 42 }))?.intoDistinctId).toBe('42');
    for (const alias of ['', 0, null, false, undefined]) {
      expect(mergeRequestOf(event('device', '$create_alias', { alias }))).toBeNull();
    }
    expect(mergeRequestOf(event('device', '$create_alias', {}))).toBeNull();
    expect(mergeRequestOf(event('device', '$identify', { alias: 'main' }))).toBeNull();
  });
});

describe('PersonEventApplier: $create_alias merges the sender’s id into the alias', () => {
  const illegalMerge = (illegalDistinctId: string, otherDistinctId: string) => ({
    type: 'cannot_merge_with_illegal_distinct_id',
    details: { illegalDistinctId, otherDistinctId, eventUuid: expect.any(String) },
  });

  it('creates one identified person with both ids when neither has one, its UUID from the alias', () => {
    const { state, applier } = setUp([], []);
    const alias = event('device', '$create_alias', { alias: 'main', $set: { a: 1 } });
    const result = applier.apply(alias);

    const person = state.find(TEAM, 'main');
    expect(state.find(TEAM, 'device')).toBe(person);
    expect(person).toMatchObject({ uuid: personUuid(TEAM, 'main'), isIdentified: true, isNew: true });
    expect(distinctIdsOf(person)).toEqual(['device', 'main']);
    expect(result).toMatchObject({
      distinctId: 'device',
      personId: personUuid(TEAM, 'main'),
      personProperties: { a: 1, $creator_event_uuid: alias.uuid },
      personMode: 'full',
      warnings: [],
    });
    expect(state.plan().inserts).toHaveLength(1);
  });

  it('gives the alias to the sender’s person when only the sender has one', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device', { properties: { seen: true } })],
      [['device', '1']],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main', $set: { a: 1 } }));

    expect(state.find(TEAM, 'main')?.id).toBe('1');
    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'device'),
      personProperties: { seen: true, a: 1 },
      warnings: [],
    });
    const plan = state.plan();
    expect(plan.newDistinctIds.map((row) => [row.distinctId, row.person.id])).toEqual([['main', '1']]);
    expect(plan.updates.map((person) => [person.id, person.isIdentified])).toEqual([['1', true]]);
    expect(plan.inserts).toEqual([]);
  });

  it('gives the sender’s id to the alias’s person when only the alias has one', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'main', { properties: { seen: true } })],
      [['main', '1']],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main', $set: { a: 1 } }));

    expect(state.find(TEAM, 'device')?.id).toBe('1');
    expect(result).toMatchObject({
      distinctId: 'device',
      personId: personUuid(TEAM, 'main'),
      personProperties: { seen: true, a: 1 },
      warnings: [],
    });
    const plan = state.plan();
    expect(plan.newDistinctIds.map((row) => [row.distinctId, row.person.id])).toEqual([['device', '1']]);
    expect(plan.updates.map((person) => [person.id, person.isIdentified])).toEqual([['1', true]]);
    expect(plan.inserts).toEqual([]);
  });

  it.each([
    ['device', 'main'],
    ['main', 'device'],
  ])(
    'keeps the alias’s person when both ids have one (sent from %j, alias %j), moving every id of the sender’s to it',
    (sender, alias) => {
      const senderPerson = loadedPerson('1', sender, {
        properties: { shared: 'sender', from_sender: 1 },
        createdAt: new Date('2022-01-01T00:00:00Z'),
        version: 4,
      });
      const aliasPerson = loadedPerson('2', alias, {
        properties: { shared: 'alias', from_alias: 1 },
        version: 9,
      });
      const { state, applier } = setUp(
        [senderPerson, aliasPerson],
        [
          [sender, '1'],
          ['third', '1'],
          [alias, '2'],
        ],
      );
      const result = applier.apply(
        event(sender, '$create_alias', { alias, $set: { email: 'a@example.com' } }),
      );

      const survivor = state.find(TEAM, alias);
      expect(survivor?.id).toBe('2');
      expect(state.find(TEAM, sender)).toBe(survivor);
      expect(state.find(TEAM, 'third')).toBe(survivor);
      expect(distinctIdsOf(survivor)).toEqual([alias, sender, 'third'].sort());
      expect(survivor).toMatchObject({
        uuid: personUuid(TEAM, alias),
        // The survivor wins conflicting keys, then the event's own updates apply.
        properties: { shared: 'alias', from_sender: 1, from_alias: 1, email: 'a@example.com' },
        isIdentified: true,
        createdAtMs: Date.parse('2022-01-01T00:00:00Z'),
        version: 10,
      });
      expect(result).toMatchObject({
        distinctId: sender,
        personId: personUuid(TEAM, alias),
        personProperties: { shared: 'alias', from_sender: 1, from_alias: 1, email: 'a@example.com' },
        personCreatedAt: '2022-01-01T00:00:00.000Z',
        warnings: [],
      });
      const plan = state.plan();
      expect(plan.merges.map(({ from, into }) => [from.id, into.id])).toEqual([['1', '2']]);
      expect(plan.updates.map((person) => person.id)).toEqual(['2']);
      expect(plan.newDistinctIds).toEqual([]);
    },
  );

  it('merges the sender’s anonymous person into an alias person that is already identified', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device'), loadedPerson('2', 'main', { isIdentified: true })],
      [
        ['device', '1'],
        ['main', '2'],
      ],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main' }));

    expect(state.find(TEAM, 'device')?.id).toBe('2');
    expect(result).toMatchObject({ personId: personUuid(TEAM, 'main'), warnings: [] });
    expect(state.plan().merges.map(({ from, into }) => [from.id, into.id])).toEqual([['1', '2']]);
  });

  it('only updates the person when both ids are already on it', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'main', { isIdentified: true })],
      [
        ['device', '1'],
        ['main', '1'],
      ],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main', $set: { a: 1 } }));

    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'main'),
      personProperties: { a: 1 },
      warnings: [],
    });
    const plan = state.plan();
    expect(plan.merges).toEqual([]);
    expect(plan.newDistinctIds).toEqual([]);
    expect(plan.updates.map((person) => person.id)).toEqual(['1']);
  });

  it('is a plain update of the sender’s person when the alias is the sender’s own id', () => {
    const { state, applier } = setUp([loadedPerson('1', 'device')], [['device', '1']]);
    const result = applier.apply(event('device', '$create_alias', { alias: 'device', $set: { a: 1 } }));
    expect(result).toMatchObject({ personProperties: { a: 1 }, warnings: [] });
    // Not identified: nothing was merged (PostHog's no-op for into === other).
    expect(state.find(TEAM, 'device')?.isIdentified).toBe(false);
  });

  it('is a plain update of the sender’s person without a truthy alias, with no warning', () => {
    for (const alias of ['', 0, null, undefined]) {
      const { state, applier } = setUp([], []);
      const result = applier.apply(event('device', '$create_alias', { alias, $set: { a: 1 } }));
      expect(result).toMatchObject({ personId: personUuid(TEAM, 'device'), warnings: [] });
      expect(distinctIdsOf(state.find(TEAM, 'device'))).toEqual(['device']);
      expect(state.find(TEAM, 'device')?.isIdentified).toBe(false);
    }
  });

  it.each([
    'anonymous',
    'Anonymous',
    'null',
    '"null"',
    'undefined',
    'UNDEFINED',
    'guest',
    "'distinct_id'",
    'id',
    'email',
    'not_authenticated',
    'true',
    'NaN',
    'None',
    '0',
    '[object Object]',
    '   ',
  ])('refuses the illegal alias %j, keeping the event on the sender’s person', (alias) => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device'), loadedPerson('2', alias)],
      [
        ['device', '1'],
        [alias, '2'],
      ],
    );
    const result = applier.apply(event('device', '$create_alias', { alias, $set: { a: 1 } }));

    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'device'),
      personProperties: { a: 1 },
      warnings: [illegalMerge(alias, 'device')],
    });
    expect(state.find(TEAM, alias)?.id).toBe('2');
    expect(state.find(TEAM, 'device')?.isIdentified).toBe(false);
    const plan = state.plan();
    expect(plan.merges).toEqual([]);
    expect(plan.newDistinctIds).toEqual([]);
  });

  it('refuses an alias longer than a distinct id can be', () => {
    const alias = 'x'.repeat(401);
    const { state, applier } = setUp([], []);
    const result = applier.apply(event('device', '$create_alias', { alias }));
    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'device'),
      warnings: [illegalMerge(alias, 'device')],
    });
    expect(state.find(TEAM, alias)).toBeUndefined();
  });

  it('refuses an illegal alias when the sender has no person yet, creating only the sender’s', () => {
    const { state, applier } = setUp([], []);
    const result = applier.apply(event('device', '$create_alias', { alias: 'null' }));
    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'device'),
      warnings: [illegalMerge('null', 'device')],
    });
    expect(state.find(TEAM, 'null')).toBeUndefined();
    expect(distinctIdsOf(state.find(TEAM, 'device'))).toEqual(['device']);
  });

  it.each(['anonymous', 'null', 'undefined', 'guest', 'distinct_id', 'NaN', '0', '"anonymous"', ' '])(
    'refuses an alias sent from the illegal id %j, leaving the alias’s person alone',
    (sender) => {
      const { state, applier } = setUp(
        [loadedPerson('2', 'main', { properties: { m: 1 } })],
        [['main', '2']],
      );
      const result = applier.apply(event(sender, '$create_alias', { alias: 'main', $set: { a: 1 } }));

      expect(result).toMatchObject({
        distinctId: sender,
        personId: personUuid(TEAM, sender),
        personProperties: { a: 1 },
        warnings: [illegalMerge(sender, 'main')],
      });
      expect(distinctIdsOf(state.find(TEAM, 'main'))).toEqual(['main']);
      expect(state.find(TEAM, sender)).toMatchObject({ isNew: true, isIdentified: false });
      expect(state.plan().updates).toEqual([]);
    },
  );

  it('reports the alias first when both ids are illegal, as PostHog reports the into side', () => {
    const { applier } = setUp([], []);
    expect(applier.apply(event('anonymous', '$create_alias', { alias: 'null' })).warnings).toEqual([
      illegalMerge('null', 'anonymous'),
    ]);
  });

  it('refuses to merge the sender’s identified person, keeping the event on it', () => {
    const { state, applier } = setUp(
      [
        loadedPerson('1', 'device', { isIdentified: true }),
        loadedPerson('2', 'main', { properties: { m: 1 } }),
      ],
      [
        ['device', '1'],
        ['main', '2'],
      ],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main', $set: { a: 1 } }));

    expect(result).toMatchObject({
      distinctId: 'device',
      personId: personUuid(TEAM, 'device'),
      personProperties: { a: 1 },
      warnings: [
        {
          type: 'cannot_merge_already_identified',
          details: {
            sourcePersonDistinctId: 'device',
            targetPersonDistinctId: 'main',
            eventUuid: expect.any(String),
          },
        },
      ],
    });
    expect(state.find(TEAM, 'main')).toMatchObject({ id: '2', properties: { m: 1 }, isIdentified: false });
    const plan = state.plan();
    expect(plan.merges).toEqual([]);
    expect(plan.newDistinctIds).toEqual([]);
    expect(plan.updates.map((person) => person.id)).toEqual(['1']);
  });

  it('refuses when both persons are identified', () => {
    const { state, applier } = setUp(
      [
        loadedPerson('1', 'device', { isIdentified: true }),
        loadedPerson('2', 'main', { isIdentified: true }),
      ],
      [
        ['device', '1'],
        ['main', '2'],
      ],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main' }));
    expect(result.warnings.map((warning) => warning.type)).toEqual(['cannot_merge_already_identified']);
    expect(result.personId).toBe(personUuid(TEAM, 'device'));
    expect(state.plan().merges).toEqual([]);
  });

  it('gives the alias to the sender’s identified person when the alias has none', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device', { isIdentified: true })],
      [['device', '1']],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main' }));
    expect(result.warnings).toEqual([]);
    expect(state.find(TEAM, 'main')?.id).toBe('1');
  });

  it('refuses once an earlier event of the batch identified the sender’s person', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device'), loadedPerson('2', 'main')],
      [
        ['device', '1'],
        ['main', '2'],
      ],
    );
    applier.apply(event('device', '$identify', { $anon_distinct_id: 'anon' }));
    const result = applier.apply(event('device', '$create_alias', { alias: 'main' }));

    expect(result.warnings.map((warning) => warning.type)).toEqual(['cannot_merge_already_identified']);
    expect(distinctIdsOf(state.find(TEAM, 'device'))).toEqual(['anon', 'device']);
    expect(distinctIdsOf(state.find(TEAM, 'main'))).toEqual(['main']);
  });

  it('chains with $identify of the same batch: the alias’s person ends up holding every id', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'anon'), loadedPerson('2', 'device'), loadedPerson('3', 'main')],
      [
        ['anon', '1'],
        ['device', '2'],
        ['main', '3'],
      ],
    );
    applier.apply(event('main', '$identify', { $anon_distinct_id: 'anon' }));
    const result = applier.apply(event('device', '$create_alias', { alias: 'main' }));

    expect(result).toMatchObject({ personId: personUuid(TEAM, 'main'), warnings: [] });
    expect(distinctIdsOf(state.find(TEAM, 'device'))).toEqual(['anon', 'device', 'main']);
    expect(state.plan().merges.map(({ from, into }) => [from.id, into.id])).toEqual([
      ['1', '3'],
      ['2', '3'],
    ]);
  });

  it('merges nothing without person processing: the event only reads the sender’s person', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device'), loadedPerson('2', 'main')],
      [
        ['device', '1'],
        ['main', '2'],
      ],
    );
    const result = applier.apply(event('device', '$create_alias', { alias: 'main' }, false));

    expect(result).toMatchObject({
      personId: personUuid(TEAM, 'device'),
      personProperties: {},
      warnings: [],
    });
    expect(result.personMode).not.toBe('full');
    expect(distinctIdsOf(state.find(TEAM, 'device'))).toEqual(['device']);
    const plan = state.plan();
    expect(plan.merges).toEqual([]);
    expect(plan.updates).toEqual([]);
    expect(plan.newDistinctIds).toEqual([]);
  });

  it('leaves $merge_dangerously in PostHog’s direction: the sender’s person survives, even over an identified one', () => {
    const { state, applier } = setUp(
      [loadedPerson('1', 'device'), loadedPerson('2', 'main', { isIdentified: true })],
      [
        ['device', '1'],
        ['main', '2'],
      ],
    );
    const result = applier.apply(event('device', '$merge_dangerously', { alias: 'main' }));
    expect(result).toMatchObject({ personId: personUuid(TEAM, 'device'), warnings: [] });
    expect(state.plan().merges.map(({ from, into }) => [from.id, into.id])).toEqual([['2', '1']]);
  });
});
