import type { Pool } from 'pg';
import { PersonProcessor } from '../persons/person-processor.service';
import {
  captured,
  countRows,
  createIngestionTestDatabase,
  IngestionTestDatabase,
  processed,
} from '../testing/ingestion-test.util';

async function groupTypes(pool: Pool, teamId: number): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ group_type: string; group_type_index: number }>(
    `SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1`,
    [teamId],
  );
  return Object.fromEntries(rows.map((row) => [row.group_type, row.group_type_index]));
}

async function groupOf(pool: Pool, teamId: number, groupTypeIndex: number, groupKey: string) {
  const { rows } = await pool.query<{
    group_properties: Record<string, unknown>;
    created_at: Date;
    version: string;
  }>(
    `SELECT group_properties, created_at, version FROM groups
      WHERE team_id = $1 AND group_type_index = $2 AND group_key = $3`,
    [teamId, groupTypeIndex, groupKey],
  );
  return rows[0] ? { ...rows[0], version: Number(rows[0].version) } : null;
}

describe('PersonProcessor: groups (reference §2.5)', () => {
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

  it('creates the group type and the group on $groupidentify, with its $group_set', async () => {
    await send([
      teamId,
      '$company_acme',
      '$groupidentify',
      {
        properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', seats: 10 } },
        timestamp: '2024-02-01T00:00:00.000Z',
      },
    ]);
    expect(await groupTypes(db.pool, teamId)).toEqual({ company: 0 });
    expect(await groupOf(db.pool, teamId, 0, 'acme')).toEqual({
      group_properties: { name: 'Acme', seats: 10 },
      created_at: new Date('2024-02-01T00:00:00.000Z'),
      version: 0,
    });
  });

  it('merges a later $group_set into the group, last value winning, and bumps its version', async () => {
    await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', seats: 10 } } },
    ]);
    await send(
      [
        teamId,
        'user-1',
        '$groupidentify',
        { properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 20 } } },
      ],
      [
        teamId,
        'user-1',
        '$groupidentify',
        {
          properties: { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro', seats: 25 } },
        },
      ],
    );
    expect(await groupOf(db.pool, teamId, 0, 'acme')).toMatchObject({
      group_properties: { name: 'Acme', seats: 25, plan: 'pro' },
      version: 1,
    });
    // The same update again changes nothing, not even the version.
    await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 25 } } },
    ]);
    expect((await groupOf(db.pool, teamId, 0, 'acme'))?.version).toBe(1);
  });

  it('creates a group with empty properties when $group_set is missing', async () => {
    await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'company', $group_key: 42 } },
    ]);
    expect(await groupOf(db.pool, teamId, 0, '42')).toMatchObject({ group_properties: {} });
  });

  it('does not change the sender’s person properties on $groupidentify', async () => {
    const [outcome] = await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'company', $group_key: 'acme', $set: { a: 1 } } },
    ]);
    expect(processed(outcome).personProperties).not.toHaveProperty('a');
  });

  it('fills $group_N from $groups on any event without creating the group', async () => {
    await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'company', $group_key: 'acme' } },
    ]);
    const [outcome] = await send([
      teamId,
      'user-1',
      'invoice paid',
      { properties: { $groups: { company: 'globex', project: 'p-1' } } },
    ]);
    expect(processed(outcome)).toMatchObject({
      groups: ['globex', 'p-1', null, null, null],
      properties: { $group_0: 'globex', $group_1: 'p-1' },
    });
    expect(await groupTypes(db.pool, teamId)).toEqual({ company: 0, project: 1 });
    expect(await groupOf(db.pool, teamId, 0, 'globex')).toBeNull();
    expect(await countRows(db.pool, 'groups', teamId)).toBe(1);
  });

  it('allows five group types per project: the sixth is ignored with a reason', async () => {
    const [outcome] = await send([
      teamId,
      'user-1',
      'a',
      { properties: { $groups: { t0: 'k0', t1: 'k1', t2: 'k2', t3: 'k3', t4: 'k4', t5: 'k5' } } },
    ]);
    expect(await groupTypes(db.pool, teamId)).toEqual({ t0: 0, t1: 1, t2: 2, t3: 3, t4: 4 });
    expect(processed(outcome)).toMatchObject({
      groups: ['k0', 'k1', 'k2', 'k3', 'k4'],
      warnings: [{ type: 'group_type_limit_reached', details: { groupType: 't5', limit: 5 } }],
    });
    expect(processed(outcome).properties).not.toHaveProperty('$group_5');

    const [identify] = await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'sixth', $group_key: 'x', $group_set: { a: 1 } } },
    ]);
    expect(processed(identify).warnings).toEqual([
      { type: 'group_type_limit_reached', details: { groupType: 'sixth', limit: 5 } },
    ]);
    expect(await countRows(db.pool, 'groups', teamId)).toBe(0);
    expect(await countRows(db.pool, 'group_type_mappings', teamId)).toBe(5);
  });

  it('numbers group types in order of first use and keeps existing numbers', async () => {
    await send([teamId, 'user-1', 'a', { properties: { $groups: { project: 'p' } } }]);
    await send(
      [teamId, 'user-1', '$groupidentify', { properties: { $group_type: 'company', $group_key: 'acme' } }],
      [teamId, 'user-1', 'b', { properties: { $groups: { team: 't', project: 'p', company: 'acme' } } }],
    );
    expect(await groupTypes(db.pool, teamId)).toEqual({ project: 0, company: 1, team: 2 });
  });

  it('drops a $groupidentify whose key is longer than 400 characters', async () => {
    const [outcome] = await send([
      teamId,
      'user-1',
      '$groupidentify',
      { properties: { $group_type: 'company', $group_key: 'k'.repeat(401) } },
    ]);
    expect(outcome).toMatchObject({ outcome: 'dropped', reason: 'group_key_too_long' });
    expect(await countRows(db.pool, 'groups', teamId)).toBe(0);
  });

  it('keeps group types per project', async () => {
    const otherTeamId = await db.createTeam();
    await send(
      [teamId, 'user-1', 'a', { properties: { $groups: { company: 'acme' } } }],
      [otherTeamId, 'user-1', 'a', { properties: { $groups: { project: 'p', company: 'acme' } } }],
    );
    expect(await groupTypes(db.pool, teamId)).toEqual({ company: 0 });
    expect(await groupTypes(db.pool, otherTeamId)).toEqual({ project: 0, company: 1 });
  });
});
