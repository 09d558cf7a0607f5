import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { evaluateFlags, flagValue } from '@hogbase/flag-evaluation';
import { openDataSource } from '@hogbase/postgres';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { FlagStore, pgSqlClient } from './flag.store';

/** The store over a migrated database: one project's definitions and a person's context, nothing of another project's. */
describe('FlagStore', () => {
  let database: TestDatabase;
  let pool: Pool;
  let store: FlagStore;
  let teamId: number;
  let otherTeamId: number;
  let alicePersonId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.destroy();
    pool = new Pool({ connectionString: database.url, max: 2 });
    store = new FlagStore(pool);
    const organization = randomUUID();
    await pool.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Org', 'org')`, [organization]);
    const teams = await pool.query<{ id: number }>(
      `INSERT INTO teams (uuid, organization_id, name, api_token, timezone)
       VALUES ($1, $3, 'A', 'phc_a', 'Europe/Paris'), ($2, $3, 'B', 'phc_b', 'UTC') RETURNING id`,
      [randomUUID(), randomUUID(), organization],
    );
    [teamId, otherTeamId] = teams.rows.map((row) => row.id);
    const persons = await pool.query<{ id: string }>(
      `INSERT INTO persons (uuid, team_id, properties) VALUES ($1, $2, '{"plan": "pro"}'), ($3, $4, '{"plan": "free"}') RETURNING id`,
      [randomUUID(), teamId, randomUUID(), otherTeamId],
    );
    alicePersonId = persons.rows[0].id;
    await pool.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'alice', $2), ($3, 'alice', $4)`,
      [teamId, alicePersonId, otherTeamId, persons.rows[1].id],
    );
    await pool.query(
      `INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, 'company', 0)`,
      [teamId],
    );
    await pool.query(
      `INSERT INTO groups (team_id, group_type_index, group_key, group_properties) VALUES ($1, 0, 'acme', '{"size": 50}')`,
      [teamId],
    );
    const cohorts = await pool.query<{ id: number }>(
      `INSERT INTO cohorts (team_id, name, is_static) VALUES ($1, 'Static', true) RETURNING id`,
      [teamId],
    );
    await pool.query(`INSERT INTO cohort_people (cohort_id, person_id) VALUES ($1, $2)`, [
      cohorts.rows[0].id,
      alicePersonId,
    ]);
    await pool.query(
      `INSERT INTO feature_flags (team_id, key, filters, ensure_experience_continuity) VALUES
         ($1, 'pro-plan', '{"groups": [{"properties": [{"key": "plan", "value": "pro", "type": "person"}], "rollout_percentage": 100}]}', true),
         ($1, 'static', $3::jsonb, false),
         ($1, 'big-companies', '{"aggregation_group_type_index": 0, "groups": [{"properties": [{"key": "size", "value": "10", "operator": "gt", "type": "group", "group_type_index": 0}]}]}', false),
         ($1, 'legacy', '{}', false),
         ($2, 'other-project', '{"groups": [{"properties": []}]}', false)`,
      [
        teamId,
        otherTeamId,
        JSON.stringify({
          groups: [{ properties: [{ key: 'id', value: cohorts.rows[0].id, type: 'cohort' }] }],
        }),
      ],
    );
    await pool.query(`INSERT INTO feature_flags (team_id, key, deleted) VALUES ($1, 'gone', true)`, [teamId]);
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("reads one project's live flags, group types, cohorts and timezone", async () => {
    const team = await store.teamFlags(teamId);
    expect(team.flags.map((flag) => flag.key).sort()).toEqual([
      'big-companies',
      'legacy',
      'pro-plan',
      'static',
    ]);
    expect(team.groupTypeMapping).toEqual({ 0: 'company' });
    expect(team.cohorts).toEqual([expect.objectContaining({ is_static: true })]);
    expect(team.timezone).toBe('Europe/Paris');
    // A legacy row without conditions reads as one condition for everyone.
    expect(team.flags.find((flag) => flag.key === 'legacy')?.filters.groups).toEqual([
      { properties: [], rollout_percentage: null },
    ]);
  });

  it("builds a person's context from what is stored, overridden by what the request sends", async () => {
    const team = await store.teamFlags(teamId);
    const stored = evaluateFlags(
      team.flags,
      await store.contextFor(team, { distinctId: 'alice', groups: { company: 'acme' } }),
    );
    expect(
      Object.fromEntries(Object.entries(stored).map(([key, result]) => [key, flagValue(result)])),
    ).toEqual({
      'pro-plan': true,
      static: true,
      'big-companies': true,
      legacy: true,
    });
    const overridden = await store.contextFor(team, {
      distinctId: 'alice',
      personProperties: { plan: 'free' },
      groups: { company: 'acme' },
      groupProperties: { company: { size: 5 } },
    });
    const results = evaluateFlags(team.flags, overridden);
    expect([flagValue(results['pro-plan']), flagValue(results['big-companies'])]).toEqual([false, false]);
  });

  it('reads nothing stored for an unknown person, an unknown group or an unmapped group type', async () => {
    const team = await store.teamFlags(teamId);
    const context = await store.contextFor(team, {
      distinctId: 'nobody',
      personProperties: { plan: 'pro' },
      groups: { company: 'unknown-co', project: 'p1' },
    });
    expect(context.personProperties).toEqual({ plan: 'pro' });
    expect(context.groupProperties).toEqual({ company: {} });
    expect(context.hashKeyOverrides).toEqual({});
    expect(context.isInStaticCohort?.(team.cohorts[0].id)).toBe(false);
    const acme = await store.contextFor(team, { distinctId: 'alice', groups: { company: 'acme' } });
    expect(acme.groupProperties).toEqual({ company: { size: 50 } });
    expect(acme.isInStaticCohort?.(team.cohorts[0].id)).toBe(true);
  });

  it('reads the same context through a named statement, again on a connection that prepared it', async () => {
    const named = new FlagStore(pgSqlClient(pool));
    const team = await store.teamFlags(teamId);
    const subject = { distinctId: 'alice', groups: { company: 'acme' }, personProperties: { age: 3 } };
    const plain = await store.contextFor(team, subject);
    for (let call = 0; call < 8; call += 1) {
      const context = await named.contextFor(team, subject);
      expect({ ...context, isInStaticCohort: undefined }).toEqual({ ...plain, isInStaticCohort: undefined });
      expect(context.isInStaticCohort?.(team.cohorts[0].id)).toBe(true);
    }
  });

  it('records hash key overrides for continuity flags, keeping the first', async () => {
    const team = await store.teamFlags(teamId);
    await store.recordHashKeyOverrides(team, 'alice', 'anon-1');
    await store.recordHashKeyOverrides(team, 'alice', 'anon-2');
    const context = await store.contextFor(team, { distinctId: 'alice' });
    expect(context.hashKeyOverrides).toEqual({ 'pro-plan': 'anon-1' });
  });
});
