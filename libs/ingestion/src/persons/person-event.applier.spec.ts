import type { ParsedEvent } from '../events/parse-captured-event.util';
import { GroupTypeIndexes } from '../groups/group-types.util';
import { GroupWrites } from '../groups/group-writes';
import { LoadedPerson, PersonBatchState } from './person-batch.state';
import { distinctIdsToLoad, PersonEventApplier } from './person-event.applier';
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

  it('loads the other side of a merge only when the merge may happen', () => {
    const ids = distinctIdsToLoad([
      event('user', '$identify', { $anon_distinct_id: 'anon' }),
      event('user', '$create_alias', { alias: 'null' }),
      event('user', '$merge_dangerously', { alias: 'other' }),
      event('personless', 'x', { $anon_distinct_id: 'ignored' }, false),
      event('guest', '$identify', { $anon_distinct_id: 'not-loaded' }),
    ]).map((ref) => ref.distinctId);
    expect(ids).toEqual(['user', 'anon', 'other', 'personless', 'guest']);
  });
});
