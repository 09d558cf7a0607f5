import { randomUUID } from 'node:crypto';
import type { CapturedEvent } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import { createTestDatabase, TestDatabase } from '@hogbase/test-support';
import { Pool } from 'pg';
import type { EventOutcome, ProcessedEvent } from '../persons/person-processing.types';

export interface IngestionTestDatabase {
  database: TestDatabase;
  pool: Pool;
  /** A new, empty project: tests share the database, each works in its own projects. */
  createTeam(): Promise<number>;
  close(): Promise<void>;
}

const ORGANIZATION_ID = '00000000-0000-4000-8000-000000000001';

/** A migrated test database with one organization, and a pool on it. */
export async function createIngestionTestDatabase(): Promise<IngestionTestDatabase> {
  const database = await createTestDatabase();
  const dataSource = await openDataSource({ url: database.url });
  await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Org', 'org')`, [
    ORGANIZATION_ID,
  ]);
  await dataSource.destroy();
  const pool = new Pool({ connectionString: database.url, max: 4 });
  return {
    database,
    pool,
    createTeam: async () => {
      const token = `phc_${randomUUID()}`;
      const { rows } = await pool.query<{ id: number }>(
        `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Web', $3) RETURNING id`,
        [randomUUID(), ORGANIZATION_ID, token],
      );
      return rows[0].id;
    },
    close: async () => {
      await pool.end().catch(() => undefined);
      await database.drop();
    },
  };
}

let clock = Date.parse('2024-05-01T10:00:00.000Z');

/** Timestamps one second apart, in call order, so that batch order and time agree. */
export function nextTimestamp(): string {
  clock += 1000;
  return new Date(clock).toISOString();
}

export interface EventOptions {
  properties?: Record<string, unknown>;
  timestamp?: string;
  raw?: Record<string, unknown>;
  uuid?: string;
}

export function captured(
  teamId: number,
  distinctId: string,
  event: string,
  options: EventOptions = {},
): CapturedEvent {
  const timestamp = options.timestamp ?? nextTimestamp();
  const uuid = options.uuid ?? randomUUID();
  return {
    uuid,
    distinct_id: distinctId,
    ip: null,
    data: JSON.stringify({
      event,
      distinct_id: distinctId,
      properties: options.properties ?? {},
      timestamp,
      uuid,
      ...options.raw,
    }),
    now: timestamp,
    sent_at: null,
    token: 'phc_web',
    team_id: teamId,
    event,
    timestamp,
  };
}

export interface StoredPerson {
  id: string;
  uuid: string;
  properties: Record<string, unknown>;
  properties_last_operation: Record<string, string>;
  is_identified: boolean;
  created_at: Date;
  version: number;
  distinct_ids: string[];
}

/** As the listing would read it. */
export async function personOf(pool: Pool, teamId: number, distinctId: string): Promise<StoredPerson | null> {
  const { rows } = await pool.query<StoredPerson & { version: string }>(
    `SELECT p.id, p.uuid, p.properties, p.properties_last_operation, p.is_identified, p.created_at, p.version,
            (SELECT array_agg(d2.distinct_id ORDER BY d2.distinct_id) FROM person_distinct_ids d2
              WHERE d2.person_id = p.id) AS distinct_ids
       FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
      WHERE d.team_id = $1 AND d.distinct_id = $2`,
    [teamId, distinctId],
  );
  return rows[0] ? { ...rows[0], version: Number(rows[0].version) } : null;
}

export async function countRows(
  pool: Pool,
  table: 'persons' | 'person_distinct_ids' | 'groups' | 'group_type_mappings',
  teamId: number,
): Promise<number> {
  const { rows } = await pool.query<{ count: string }>(`SELECT count(*) FROM ${table} WHERE team_id = $1`, [
    teamId,
  ]);
  return Number(rows[0].count);
}

/** Everything ingestion wrote for a project, in a stable order: for before/after comparisons. */
export async function snapshot(pool: Pool, teamId: number): Promise<unknown> {
  const persons = await pool.query(
    `SELECT uuid, properties, properties_last_updated_at, properties_last_operation, is_identified, created_at, version
       FROM persons WHERE team_id = $1 ORDER BY uuid`,
    [teamId],
  );
  const distinctIds = await pool.query(
    `SELECT d.distinct_id, p.uuid, d.version FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
      WHERE d.team_id = $1 ORDER BY d.distinct_id`,
    [teamId],
  );
  const groupTypes = await pool.query(
    `SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1 ORDER BY group_type_index`,
    [teamId],
  );
  const groups = await pool.query(
    `SELECT group_type_index, group_key, group_properties, created_at, version FROM groups
      WHERE team_id = $1 ORDER BY group_type_index, group_key`,
    [teamId],
  );
  return {
    persons: persons.rows,
    distinctIds: distinctIds.rows,
    groupTypes: groupTypes.rows,
    groups: groups.rows,
  };
}

/** The outcome of an event the processor took (anything else fails the test, naming the outcome). */
export function processed(outcome: EventOutcome): ProcessedEvent {
  if (outcome.outcome !== 'ok') throw new Error(`expected a processed event, got ${JSON.stringify(outcome)}`);
  return outcome;
}
