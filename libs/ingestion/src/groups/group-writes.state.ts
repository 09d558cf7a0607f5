import type { Properties } from '../persons/person-processing.types';
import { assignOwn } from '../shared/own-property.util';

export interface GroupWrite {
  teamId: number;
  groupTypeIndex: number;
  groupKey: string;
  properties: Properties;
  /** The batch's first `$groupidentify` for the group: created_at if the group is new. */
  createdAt: string;
}

/** Group properties are last-write-wins: `existing || accumulated` equals one write per event. */
export class GroupWrites {
  private readonly writes = new Map<string, GroupWrite>();

  add(
    teamId: number,
    groupTypeIndex: number,
    groupKey: string,
    groupSet: Properties,
    timestamp: string,
  ): void {
    const key = `${teamId}:${groupTypeIndex}:${groupKey}`;
    const write = this.writes.get(key);
    if (write) {
      assignOwn(write.properties, groupSet);
    } else {
      this.writes.set(key, {
        teamId,
        groupTypeIndex,
        groupKey,
        properties: { ...groupSet },
        createdAt: timestamp,
      });
    }
  }

  /** In key order, so that concurrent batches lock the same groups in the same order. */
  list(): GroupWrite[] {
    return [...this.writes.values()].sort(
      (left, right) =>
        left.teamId - right.teamId ||
        left.groupTypeIndex - right.groupTypeIndex ||
        (left.groupKey < right.groupKey ? -1 : left.groupKey > right.groupKey ? 1 : 0),
    );
  }
}
