import { toJsonb } from '../shared/postgres-text.util';
import type { Queryable } from '../shared/queryable.types';
import type { LoadedDistinctId, LoadedPerson, PersonRecord, PersonWritePlan } from './person-batch.state';
import type { PropertyOperation } from './person-properties.util';
import type { Properties } from './person-processing.types';

export interface DistinctIdRef {
  teamId: number;
  distinctId: string;
}

/** Another person holds the UUID derived from this distinct id: the batch is re-run with random ones. */
export class PersonUuidTakenError extends Error {
  constructor(readonly uuids: readonly string[]) {
    super(`person UUID already taken: ${uuids.join(', ')}`);
    this.name = 'PersonUuidTakenError';
  }
}

/** What we read no longer holds (a writer bypassed our locks): the batch is re-run from a fresh read. */
export class DistinctIdConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DistinctIdConflictError';
  }
}

/** Locked against deletion until the batch commits. */
export async function lockTeams(client: Queryable, teamIds: readonly number[]): Promise<Set<number>> {
  const { rows } = await client.query<{ id: number }>(
    `SELECT id FROM teams WHERE id = ANY($1::int[]) ORDER BY id FOR KEY SHARE`,
    [teamIds],
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * In one sorted order, so two batches cannot deadlock. TRICKY: these make "no person yet, create one"
 * safe: a row lock cannot lock a missing row, but every writer of a distinct id takes this lock first.
 */
export async function lockDistinctIds(client: Queryable, refs: readonly DistinctIdRef[]): Promise<void> {
  if (refs.length === 0) return;
  await client.query(
    `SELECT pg_advisory_xact_lock(s.team_id, s.hash)
       FROM (SELECT DISTINCT k.team_id, hashtext(k.distinct_id) AS hash
               FROM unnest($1::int[], $2::text[]) AS k(team_id, distinct_id)
              ORDER BY 1, 2) s`,
    [refs.map((ref) => ref.teamId), refs.map((ref) => ref.distinctId)],
  );
}

interface DistinctIdRow {
  team_id: number;
  distinct_id: string;
  person_id: string;
}

interface PersonRow {
  id: string;
  uuid: string;
  team_id: number;
  properties: Properties;
  properties_last_updated_at: Record<string, string>;
  properties_last_operation: Record<string, PropertyOperation>;
  is_identified: boolean;
  created_at: Date;
  version: string;
}

/**
 * The distinct id rows first (a concurrent merge must update them, so it waits for us), then their
 * persons FOR UPDATE in id order: a person whose distinct id we hold cannot be merged away meanwhile.
 */
export async function loadPersons(
  client: Queryable,
  refs: readonly DistinctIdRef[],
): Promise<{ persons: LoadedPerson[]; distinctIds: LoadedDistinctId[] }> {
  if (refs.length === 0) return { persons: [], distinctIds: [] };
  const distinctIdRows = await client.query<DistinctIdRow>(
    `SELECT d.team_id, d.distinct_id, d.person_id
       FROM person_distinct_ids d
       JOIN unnest($1::int[], $2::text[]) AS k(team_id, distinct_id)
         ON d.team_id = k.team_id AND d.distinct_id = k.distinct_id
      ORDER BY d.team_id, d.distinct_id
        FOR UPDATE OF d`,
    [refs.map((ref) => ref.teamId), refs.map((ref) => ref.distinctId)],
  );
  const distinctIds = distinctIdRows.rows.map((row) => ({
    teamId: row.team_id,
    distinctId: row.distinct_id,
    personId: row.person_id,
  }));
  if (distinctIds.length === 0) return { persons: [], distinctIds };

  const personIds = [...new Set(distinctIds.map((row) => row.personId))];
  const personRows = await client.query<PersonRow>(
    `SELECT id, uuid, team_id, properties, properties_last_updated_at, properties_last_operation,
            is_identified, created_at, version
       FROM persons
      WHERE id = ANY($1::bigint[])
      ORDER BY id
        FOR UPDATE`,
    [personIds],
  );
  if (personRows.rows.length !== personIds.length) {
    // Cannot happen while we hold the distinct id rows; a re-run reads a consistent state.
    throw new DistinctIdConflictError(
      `${personIds.length - personRows.rows.length} person(s) of locked distinct ids disappeared`,
    );
  }
  const persons = personRows.rows.map((row) => ({
    id: row.id,
    uuid: row.uuid,
    teamId: row.team_id,
    properties: row.properties,
    propertiesLastUpdatedAt: row.properties_last_updated_at,
    propertiesLastOperation: row.properties_last_operation,
    isIdentified: row.is_identified,
    createdAt: row.created_at,
    version: Number(row.version),
  }));
  return { persons, distinctIds };
}

function personColumns(persons: readonly PersonRecord[]) {
  return {
    properties: persons.map((person) => toJsonb(person.properties)),
    lastUpdatedAt: persons.map((person) => toJsonb(person.propertiesLastUpdatedAt)),
    lastOperation: persons.map((person) => toJsonb(person.propertiesLastOperation)),
    isIdentified: persons.map((person) => person.isIdentified),
    createdAt: persons.map((person) => new Date(person.createdAtMs).toISOString()),
    version: persons.map((person) => person.version),
  };
}

/** The distinct ids move before the merged-away persons go, whose cascade would take them along. */
export async function writePersons(client: Queryable, plan: PersonWritePlan): Promise<void> {
  await insertPersons(client, plan.inserts);

  if (plan.updates.length > 0) {
    const columns = personColumns(plan.updates);
    await client.query(
      `UPDATE persons p
          SET properties = v.properties::jsonb,
              properties_last_updated_at = v.last_updated_at::jsonb,
              properties_last_operation = v.last_operation::jsonb,
              is_identified = v.is_identified,
              created_at = v.created_at,
              version = v.version
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::timestamptz[], $7::bigint[])
           AS v(id, properties, last_updated_at, last_operation, is_identified, created_at, version)
        WHERE p.id = v.id`,
      [
        plan.updates.map((person) => person.id),
        columns.properties,
        columns.lastUpdatedAt,
        columns.lastOperation,
        columns.isIdentified,
        columns.createdAt,
        columns.version,
      ],
    );
  }

  if (plan.merges.length > 0) {
    // Every distinct id of a merged-away person, also those this batch never read.
    await client.query(
      `UPDATE person_distinct_ids d
          SET person_id = m.into_id, version = d.version + 1
         FROM unnest($1::bigint[], $2::bigint[]) AS m(from_id, into_id)
        WHERE d.person_id = m.from_id`,
      [plan.merges.map((merge) => merge.from.id), plan.merges.map((merge) => merge.into.id)],
    );
  }

  if (plan.newDistinctIds.length > 0) {
    const inserted = await client.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version)
       SELECT v.team_id, v.distinct_id, v.person_id, 0
         FROM unnest($1::int[], $2::text[], $3::bigint[]) AS v(team_id, distinct_id, person_id)
       ON CONFLICT (team_id, distinct_id) DO NOTHING`,
      [
        plan.newDistinctIds.map((row) => row.teamId),
        plan.newDistinctIds.map((row) => row.distinctId),
        plan.newDistinctIds.map((row) => row.person.id),
      ],
    );
    if (inserted.rowCount !== plan.newDistinctIds.length) {
      throw new DistinctIdConflictError(
        `${plan.newDistinctIds.length - (inserted.rowCount ?? 0)} distinct id(s) were created concurrently`,
      );
    }
  }

  if (plan.merges.length > 0) {
    await client.query(`DELETE FROM persons WHERE id = ANY($1::bigint[])`, [
      plan.merges.map((merge) => merge.from.id),
    ]);
  }
}

async function insertPersons(client: Queryable, persons: readonly PersonRecord[]): Promise<void> {
  if (persons.length === 0) return;
  const columns = personColumns(persons);
  const { rows } = await client.query<{ id: string; team_id: number; uuid: string }>(
    `INSERT INTO persons (uuid, team_id, properties, properties_last_updated_at, properties_last_operation,
                          is_identified, created_at, version)
     SELECT v.uuid, v.team_id, v.properties::jsonb, v.last_updated_at::jsonb, v.last_operation::jsonb,
            v.is_identified, v.created_at, v.version
       FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::timestamptz[], $8::bigint[])
         AS v(uuid, team_id, properties, last_updated_at, last_operation, is_identified, created_at, version)
     ON CONFLICT (team_id, uuid) DO NOTHING
     RETURNING id, team_id, uuid`,
    [
      persons.map((person) => person.uuid),
      persons.map((person) => person.teamId),
      columns.properties,
      columns.lastUpdatedAt,
      columns.lastOperation,
      columns.isIdentified,
      columns.createdAt,
      columns.version,
    ],
  );
  const ids = new Map(rows.map((row) => [`${row.team_id}:${row.uuid}`, row.id]));
  for (const person of persons) person.id = ids.get(`${person.teamId}:${person.uuid}`) ?? null;
  const taken = persons.filter((person) => person.id === null).map((person) => person.uuid);
  if (taken.length > 0) throw new PersonUuidTakenError(taken);
}
