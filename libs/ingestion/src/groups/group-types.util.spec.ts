import type { ParsedEvent } from '../events/parse-captured-event.util';
import { assignGroupTypeIndexes, collectGroupTypes, normalizeGroupType } from './group-types.util';

function parsed(
  teamId: number,
  event: string,
  properties: Record<string, unknown>,
  processPerson = true,
): ParsedEvent {
  return {
    uuid: '00000000-0000-4000-8000-000000000000',
    teamId,
    distinctId: 'd',
    event,
    timestamp: '2024-01-01T00:00:00.000Z',
    timestampMs: 0,
    properties,
    processPerson,
    warnings: [],
  };
}

describe('assignGroupTypeIndexes', () => {
  it('gives new types the lowest free indexes, in order', () => {
    const existing = [
      { teamId: 1, groupType: 'company', groupTypeIndex: 0 },
      { teamId: 1, groupType: 'team', groupTypeIndex: 2 },
    ];
    expect(assignGroupTypeIndexes(1, existing, ['company', 'project', 'org', 'project'])).toEqual([
      { teamId: 1, groupType: 'project', groupTypeIndex: 1 },
      { teamId: 1, groupType: 'org', groupTypeIndex: 3 },
    ]);
  });

  it('stops at five types per project', () => {
    expect(
      assignGroupTypeIndexes(1, [], ['a', 'b', 'c', 'd', 'e', 'f']).map((row) => row.groupTypeIndex),
    ).toEqual([0, 1, 2, 3, 4]);
    const full = ['a', 'b', 'c', 'd', 'e'].map((groupType, groupTypeIndex) => ({
      teamId: 1,
      groupType,
      groupTypeIndex,
    }));
    expect(assignGroupTypeIndexes(1, full, ['f'])).toEqual([]);
  });
});

describe('collectGroupTypes', () => {
  it('lists each project’s types in order of first use, only from events with person processing', () => {
    const types = collectGroupTypes([
      parsed(1, 'a', { $groups: { project: 'p' } }),
      parsed(1, '$groupidentify', { $group_type: 'company', $group_key: 'acme', $groups: { team: 't' } }),
      parsed(2, 'b', { $groups: { org: 'o' } }),
      parsed(1, 'c', { $groups: { ignored: 'x' } }, false),
      parsed(1, 'd', { $groups: 'not an object' }),
    ]);
    expect(types).toEqual(
      new Map([
        [1, ['project', 'company', 'team']],
        [2, ['org']],
      ]),
    );
  });
});

describe('normalizeGroupType', () => {
  it('refuses what cannot name a group type', () => {
    expect(normalizeGroupType('company')).toBe('company');
    expect(normalizeGroupType('')).toBeNull();
    expect(normalizeGroupType('x'.repeat(401))).toBeNull();
    expect(normalizeGroupType({})).toBeNull();
  });
});
