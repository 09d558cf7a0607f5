import { toJsonb } from '../shared/postgres-text.util';
import type { Queryable } from '../shared/queryable.types';
import type { GroupWrite } from './group-writes.state';
import { assignGroupTypeIndexes, GroupTypeIndexes, GroupTypeMappingRow } from './group-types.util';

interface GroupTypeMappingDbRow {
  team_id: number;
  group_type: string;
  group_type_index: number;
}

async function readGroupTypeMappings(
  client: Queryable,
  teamIds: readonly number[],
): Promise<GroupTypeMappingRow[]> {
  const { rows } = await client.query<GroupTypeMappingDbRow>(
    `SELECT team_id, group_type, group_type_index FROM group_type_mappings WHERE team_id = ANY($1::int[])`,
    [teamIds],
  );
  return rows.map((row) => ({
    teamId: row.team_id,
    groupType: row.group_type,
    groupTypeIndex: row.group_type_index,
  }));
}

/**
 * One read in the common case. New types lock their project's allocation (a transaction advisory lock,
 * so two processes never hand out one index twice), re-read, then take the lowest free indexes.
 */
export async function resolveGroupTypes(
  client: Queryable,
  wantedByTeam: ReadonlyMap<number, readonly string[]>,
): Promise<GroupTypeIndexes> {
  if (wantedByTeam.size === 0) return new GroupTypeIndexes([]);
  const mappings = await readGroupTypeMappings(client, [...wantedByTeam.keys()]);

  const teamsWithNewTypes = [...wantedByTeam]
    .filter(
      ([teamId, wanted]) =>
        assignGroupTypeIndexes(
          teamId,
          mappings.filter((mapping) => mapping.teamId === teamId),
          wanted,
        ).length > 0,
    )
    .map(([teamId]) => teamId)
    .sort((left, right) => left - right);
  if (teamsWithNewTypes.length === 0) return new GroupTypeIndexes(mappings);

  await client.query(
    `SELECT pg_advisory_xact_lock(hashtextextended('hogbase:group_type_mappings', s.team_id))
       FROM (SELECT team_id FROM unnest($1::int[]) AS t(team_id) ORDER BY team_id) s`,
    [teamsWithNewTypes],
  );
  const current = await readGroupTypeMappings(client, teamsWithNewTypes);
  const assigned = teamsWithNewTypes.flatMap((teamId) =>
    assignGroupTypeIndexes(
      teamId,
      current.filter((mapping) => mapping.teamId === teamId),
      wantedByTeam.get(teamId) ?? [],
    ),
  );
  if (assigned.length > 0) {
    await client.query(
      `INSERT INTO group_type_mappings (team_id, group_type, group_type_index)
       SELECT * FROM unnest($1::int[], $2::text[], $3::smallint[])
       ON CONFLICT DO NOTHING`,
      [
        assigned.map((mapping) => mapping.teamId),
        assigned.map((mapping) => mapping.groupType),
        assigned.map((mapping) => mapping.groupTypeIndex),
      ],
    );
  }
  const refreshed = new Set(teamsWithNewTypes);
  return new GroupTypeIndexes([
    ...mappings.filter((mapping) => !refreshed.has(mapping.teamId)),
    ...current,
    ...assigned,
  ]);
}

/** Existing groups get `properties || accumulated` only when that changes them: a redelivery is a no-op. */
export async function upsertGroups(client: Queryable, writes: readonly GroupWrite[]): Promise<void> {
  if (writes.length === 0) return;
  await client.query(
    `INSERT INTO groups (team_id, group_type_index, group_key, group_properties, created_at, version)
     SELECT v.team_id, v.group_type_index, v.group_key, v.properties::jsonb, v.created_at, 0
       FROM unnest($1::int[], $2::smallint[], $3::text[], $4::text[], $5::timestamptz[])
         AS v(team_id, group_type_index, group_key, properties, created_at)
     ON CONFLICT (team_id, group_type_index, group_key) DO UPDATE
       SET group_properties = groups.group_properties || EXCLUDED.group_properties,
           version = groups.version + 1
       WHERE groups.group_properties IS DISTINCT FROM groups.group_properties || EXCLUDED.group_properties`,
    [
      writes.map((write) => write.teamId),
      writes.map((write) => write.groupTypeIndex),
      writes.map((write) => write.groupKey),
      writes.map((write) => toJsonb(write.properties)),
      writes.map((write) => write.createdAt),
    ],
  );
}
