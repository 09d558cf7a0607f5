import type { ParsedEvent } from '../events/parse-captured-event.util';
import { isPlainObject } from '../events/person-initial-properties.util';
import { sanitizeText, scalarText } from '../shared/postgres-text.util';

/** PostHog's limit: group type indexes 0..4, the `$group_0` .. `$group_4` columns. */
export const MAX_GROUP_TYPES_PER_TEAM = 5;
/** varchar(400). */
export const MAX_GROUP_TYPE_LENGTH = 400;

export interface GroupTypeMappingRow {
  teamId: number;
  groupType: string;
  groupTypeIndex: number;
}

export function normalizeGroupType(value: unknown): string | null {
  const text = scalarText(value);
  if (text === null) return null;
  const groupType = sanitizeText(text);
  return groupType === '' || groupType.length > MAX_GROUP_TYPE_LENGTH ? null : groupType;
}

/** Undefined unless both are set (PostHog skips it otherwise). */
export function groupIdentifyTarget(
  event: ParsedEvent,
): { groupType: string | null; groupKey: string } | null {
  if (event.event !== '$groupidentify') return null;
  const groupType = event.properties.$group_type;
  const groupKey = scalarText(event.properties.$group_key);
  if (!groupType || !groupKey) return null;
  return { groupType: normalizeGroupType(groupType), groupKey: sanitizeText(groupKey) };
}

/** In order of first use, which orders new indexes; only events with person processing count (PostHog). */
export function collectGroupTypes(events: readonly ParsedEvent[]): Map<number, string[]> {
  const byTeam = new Map<number, Set<string>>();
  const add = (teamId: number, groupType: string | null): void => {
    if (groupType === null) return;
    let types = byTeam.get(teamId);
    if (!types) byTeam.set(teamId, (types = new Set()));
    types.add(groupType);
  };
  for (const event of events) {
    if (!event.processPerson) continue;
    add(event.teamId, groupIdentifyTarget(event)?.groupType ?? null);
    const groups = event.properties.$groups;
    if (isPlainObject(groups)) {
      for (const groupType of Object.keys(groups)) add(event.teamId, normalizeGroupType(groupType));
    }
  }
  return new Map([...byTeam].map(([teamId, types]) => [teamId, [...types]]));
}

/** The lowest free index for each, in order; none once all five are taken (PostHog ignores the sixth). */
export function assignGroupTypeIndexes(
  teamId: number,
  existing: readonly GroupTypeMappingRow[],
  wanted: readonly string[],
): GroupTypeMappingRow[] {
  const known = new Set(existing.map((mapping) => mapping.groupType));
  const used = new Set(existing.map((mapping) => mapping.groupTypeIndex));
  const assigned: GroupTypeMappingRow[] = [];
  for (const groupType of wanted) {
    if (known.has(groupType)) continue;
    let index = 0;
    while (used.has(index)) index += 1;
    if (index >= MAX_GROUP_TYPES_PER_TEAM) break;
    used.add(index);
    known.add(groupType);
    assigned.push({ teamId, groupType, groupTypeIndex: index });
  }
  return assigned;
}

export class GroupTypeIndexes {
  private readonly indexes = new Map<string, number>();

  constructor(mappings: readonly GroupTypeMappingRow[]) {
    for (const { teamId, groupType, groupTypeIndex } of mappings) {
      this.indexes.set(`${teamId}:${groupType}`, groupTypeIndex);
    }
  }

  indexOf(teamId: number, groupType: string): number | null {
    return this.indexes.get(`${teamId}:${groupType}`) ?? null;
  }
}
