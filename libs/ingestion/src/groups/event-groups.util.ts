import type { ParsedEvent } from '../events/parse-captured-event.util';
import { isPlainObject } from '../events/person-initial-properties.util';
import type { GroupColumns, IngestionWarning, Properties } from '../persons/person-processing.types';
import { scalarText } from '../shared/postgres-text.util';
import type { GroupWrites } from './group-writes.state';
import {
  groupIdentifyTarget,
  GroupTypeIndexes,
  MAX_GROUP_TYPES_PER_TEAM,
  normalizeGroupType,
} from './group-types.util';

/**
 * PostHog's addGroupProperties: `$groups` become `$group_N` without creating a group; a type past the
 * project's five is ignored with a warning. `properties` is copied only when `$group_N` are added.
 */
export function applyEventGroups(
  event: ParsedEvent,
  groupTypes: GroupTypeIndexes,
  groupWrites: GroupWrites,
  warnings: IngestionWarning[],
): { groups: GroupColumns; properties: Properties } {
  let { properties } = event;
  const columns: GroupColumns = [null, null, null, null, null];
  const indexOf = (rawType: unknown): number | null => {
    const groupType = normalizeGroupType(rawType);
    if (groupType === null) {
      warnings.push({ type: 'invalid_group_type', details: { groupType: rawType } });
      return null;
    }
    const index = groupTypes.indexOf(event.teamId, groupType);
    if (index === null) {
      warnings.push({
        type: 'group_type_limit_reached',
        details: { groupType, limit: MAX_GROUP_TYPES_PER_TEAM },
      });
    }
    return index;
  };

  const groups = properties.$groups;
  if (isPlainObject(groups)) {
    for (const [groupType, groupKey] of Object.entries(groups)) {
      const index = indexOf(groupType);
      if (index === null) continue;
      if (properties === event.properties) properties = { ...properties };
      properties[`$group_${index}`] = groupKey;
      columns[index] = scalarText(groupKey);
    }
  }

  const target = groupIdentifyTarget(event);
  if (target) {
    const index = indexOf(properties.$group_type);
    if (index !== null) {
      const groupSet = isPlainObject(properties.$group_set) ? properties.$group_set : {};
      groupWrites.add(event.teamId, index, target.groupKey, groupSet, event.timestamp);
    }
  }
  return { groups: columns, properties };
}
