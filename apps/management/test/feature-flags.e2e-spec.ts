import { randomUUID } from 'node:crypto';
import { insertEvents } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { MembershipLevel } from '@hogbase/postgres';
import { ISO_8601_PATTERN, withDeadline } from '@hogbase/test-support';
import { ApiClient, ManagementTestApp, startManagementTestApp } from './management-test-app';

/** Turns a request that never answers into a failure naming it (the embedded Postgres used to hang). */
/** The feature flag API: the spec's resource, PostHog's validation and lifecycle (reference §8). */
describe('feature flags', () => {
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let projectId: number;
  let organizationId: string;
  let flags: string;
  let ownerEmail: string;
  let clickhouse: TestClickHouse;

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    ownerEmail = 'owner@flags.test';
    const owner = await testApp.createOwner(ownerEmail);
    ({ api, projectId, organizationId } = owner);
    flags = `/api/projects/${projectId}/feature_flags/`;
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  const rollout = (percentage: number | null, properties: unknown[] = []) => ({
    groups: [{ properties, rollout_percentage: percentage }],
  });

  async function createFlag(body: Record<string, unknown>) {
    const response = await api.post(flags, body);
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 201 });
    return response.body as Record<string, any>;
  }

  describe('the resource', () => {
    it('creates a flag with every field of the spec, typed', async () => {
      const flag = await createFlag({ key: 'new-checkout', name: 'The new checkout', filters: rollout(30) });
      expect(flag).toEqual({
        id: expect.any(Number),
        name: 'The new checkout',
        key: 'new-checkout',
        filters: rollout(30),
        deleted: false,
        active: true,
        created_by: expect.objectContaining({
          email: ownerEmail,
          uuid: expect.any(String),
          id: expect.any(Number),
        }),
        created_at: expect.stringMatching(ISO_8601_PATTERN),
        is_simple_flag: true,
        rollout_percentage: 30,
        ensure_experience_continuity: false,
        experiment_set: [],
        surveys: [],
        features: [],
        rollback_conditions: null,
        performed_rollback: null,
        can_edit: true,
        tags: [],
        usage_dashboard: expect.any(Number),
        analytics_dashboards: [],
        has_enriched_analytics: false,
      });
      const retrieved = await api.get(`${flags}${flag.id}/`);
      expect(retrieved.body).toEqual(flag);
    });

    it('computes is_simple_flag and rollout_percentage from the conditions', async () => {
      const targeted = await createFlag({
        key: 'targeted',
        filters: rollout(50, [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }]),
      });
      expect([targeted.is_simple_flag, targeted.rollout_percentage]).toEqual([false, null]);
      const everyone = await createFlag({ key: 'everyone' });
      expect(everyone.filters).toEqual({ groups: [{ properties: [], rollout_percentage: null }] });
      expect([everyone.is_simple_flag, everyone.rollout_percentage]).toEqual([true, null]);
    });

    it('lists live flags only, newest first, in the DRF envelope', async () => {
      const doomed = await createFlag({ key: 'doomed' });
      await api.patch(`${flags}${doomed.id}/`, { deleted: true });
      const list = await api.get(flags);
      expect(list.status).toBe(200);
      expect(Object.keys(list.body).sort()).toEqual(['count', 'next', 'previous', 'results']);
      const keys = list.body.results.map((flag: { key: string }) => flag.key);
      expect(keys).not.toContain('doomed');
      expect(keys.slice(0, 3)).toEqual(['everyone', 'targeted', 'new-checkout']);
      const page = await api.get(`${flags}?limit=1&offset=1`);
      expect(page.body.results.map((flag: { key: string }) => flag.key)).toEqual(['targeted']);
      const search = await api.get(`${flags}?search=CHECK`);
      expect(search.body.results.map((flag: { key: string }) => flag.key)).toEqual(['new-checkout']);
    });
  });

  describe('soft delete', () => {
    it('deletes by PATCH {deleted: true}; the flag stays retrievable and its key can be taken again', async () => {
      const flag = await createFlag({ key: 'reused-key' });
      const deleted = await api.patch(`${flags}${flag.id}/`, { deleted: true });
      expect([deleted.status, deleted.body.deleted]).toEqual([200, true]);
      expect((await api.get(`${flags}${flag.id}/`)).body.deleted).toBe(true);
      const again = await createFlag({ key: 'reused-key' });
      expect(again.id).not.toBe(flag.id);
      // The old row gave its key to the new flag, as PostHog does.
      expect((await api.get(`${flags}${flag.id}/`)).status).toBe(404);
    });

    it('refuses a hard DELETE with 405 and no body', async () => {
      const flag = await createFlag({ key: 'not-deletable' });
      const response = await api.delete(`${flags}${flag.id}/`);
      expect([response.status, response.body]).toEqual([405, null]);
      expect((await api.get(`${flags}${flag.id}/`)).body.deleted).toBe(false);
    });
  });

  describe('validation', () => {
    const refused = async (body: Record<string, unknown>, expected: Record<string, unknown>) => {
      const response = await api.post(flags, { key: `k-${randomUUID().slice(0, 8)}`, ...body });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: expect.objectContaining({ type: 'validation_error', ...expected }),
      });
    };

    it('requires a key, unique among live flags, of letters, digits, - and _', async () => {
      expect((await api.post(flags, {})).body).toMatchObject({ attr: 'key', code: 'required' });
      await createFlag({ key: 'taken' });
      const duplicate = await api.post(flags, { key: 'taken' });
      expect(duplicate.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'There is already a feature flag with this key.',
        attr: 'key',
      });
      const badKey = await api.post(flags, { key: 'has spaces' });
      expect(badKey.body).toEqual({
        type: 'validation_error',
        code: 'invalid_key',
        detail: 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.',
        attr: 'key',
      });
    });

    it.each([
      [
        'a non-person property on a person flag',
        { groups: [{ properties: [{ key: 'plan', value: 'x', type: 'event' }] }] },
        { attr: 'filters', detail: 'Filters are not valid (can only use person and cohort properties)' },
      ],
      [
        'a person property on a group flag',
        {
          aggregation_group_type_index: 0,
          groups: [{ properties: [{ key: 'plan', value: 'x', type: 'person' }] }],
        },
        { attr: 'filters', detail: 'Filters are not valid (can only use group properties)' },
      ],
      [
        'a variant override that does not exist',
        {
          multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
          groups: [{ properties: [], variant: 'b' }],
        },
        { attr: 'filters', detail: 'Filters are not valid (variant override does not exist)' },
      ],
      [
        'variants not summing to 100',
        {
          multivariate: {
            variants: [
              { key: 'a', rollout_percentage: 50 },
              { key: 'b', rollout_percentage: 40 },
            ],
          },
          groups: [{ properties: [] }],
        },
        {
          attr: 'filters',
          detail: 'Invalid variant definitions: Variant rollout percentages must sum to 100.',
        },
      ],
      [
        'an unparseable date',
        {
          groups: [
            { properties: [{ key: 'signup', value: 'someday', operator: 'is_date_after', type: 'person' }] },
          ],
        },
        { attr: 'filters', code: 'invalid_date', detail: 'Invalid date value: someday' },
      ],
      [
        'a number for a text operator',
        { groups: [{ properties: [{ key: 'email', value: 5, operator: 'icontains', type: 'person' }] }] },
        { attr: 'filters', code: 'invalid_value', detail: 'Invalid value for operator icontains: 5' },
      ],
      [
        'a regex with a backreference, which RE2 (linear time) cannot run',
        {
          groups: [
            { properties: [{ key: 'email', value: '^(a+)\\1+$', operator: 'regex', type: 'person' }] },
          ],
        },
        {
          attr: 'filters',
          code: 'invalid_value',
          detail: expect.stringMatching(
            /^Invalid value for operator regex: \^\(a\+\)\\1\+\$ is not a regular expression flags can evaluate: .*backreferences/,
          ) as unknown as string,
        },
      ],
      [
        'payloads that are not an object',
        { groups: [{ properties: [] }], payloads: 'x' },
        { attr: 'filters', detail: 'Payloads must be passed as a dictionary' },
      ],
      [
        'a boolean flag payload not keyed "true"',
        { groups: [{ properties: [] }], payloads: { false: '{}' } },
        { attr: 'filters', detail: "Payload keys must be 'true' for boolean flags" },
      ],
      [
        'a multivariate payload not keyed by a variant',
        {
          multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
          groups: [{ properties: [] }],
          payloads: { z: '1' },
        },
        { attr: 'filters', detail: 'Payload keys must match a variant key for multivariate flags' },
      ],
      [
        'a payload that is not JSON',
        { groups: [{ properties: [] }], payloads: { true: '{nope' } },
        { attr: 'filters', detail: 'Payload value is not valid JSON' },
      ],
      [
        'a cohort that does not exist',
        { groups: [{ properties: [{ key: 'id', value: 999999, type: 'cohort' }] }] },
        { attr: 'filters', code: 'cohort_does_not_exist', detail: 'Cohort with id 999999 does not exist' },
      ],
      [
        'a list of more than 1000 values',
        {
          groups: [
            {
              properties: [
                {
                  key: 'email',
                  value: Array.from({ length: 1001 }, (_, i) => `u${i}`),
                  operator: 'exact',
                  type: 'person',
                },
              ],
            },
          ],
        },
        {
          attr: 'filters',
          detail: 'Property group expressions of type email cannot contain more than 1000 values.',
        },
      ],
    ])('refuses %s', async (_name, filters, expected) => {
      await refused({ filters }, expected);
    });

    it('refuses a cohort that filters on events, and accepts a person-property cohort', async () => {
      const [behavioral] = await testApp.dataSource.query<{ id: number }[]>(
        `INSERT INTO cohorts (team_id, name, filters) VALUES ($1, 'Buyers', $2) RETURNING id`,
        [
          projectId,
          {
            properties: {
              type: 'AND',
              values: [{ type: 'behavioral', key: 'purchase', value: 'performed_event' }],
            },
          },
        ],
      );
      await refused(
        { filters: { groups: [{ properties: [{ key: 'id', value: behavioral.id, type: 'cohort' }] }] } },
        {
          code: 'behavioral_cohort_found',
          detail: "Cohort 'Buyers' with filters on events cannot be used in feature flags.",
        },
      );
      const [people] = await testApp.dataSource.query<{ id: number }[]>(
        `INSERT INTO cohorts (team_id, name, filters) VALUES ($1, 'Pros', $2) RETURNING id`,
        [projectId, { properties: { type: 'AND', values: [{ type: 'person', key: 'plan', value: 'pro' }] } }],
      );
      await createFlag({
        key: 'for-pros',
        filters: { groups: [{ properties: [{ key: 'id', value: people.id, type: 'cohort' }] }] },
      });
    });
  });

  describe('updates', () => {
    it('keeps the stored conditions when filters come without groups, resets performed_rollback on activation', async () => {
      const flag = await createFlag({
        key: 'patched',
        filters: rollout(10),
        performed_rollback: true,
        active: false,
      });
      const kept = await api.patch(`${flags}${flag.id}/`, { filters: { payloads: {} } });
      expect(kept.body.filters).toEqual(rollout(10));
      const activated = await api.patch(`${flags}${flag.id}/`, { active: true, analytics_dashboards: [5] });
      expect(activated.body).toMatchObject({
        active: true,
        performed_rollback: false,
        analytics_dashboards: [5],
      });
      const added = await api.patch(`${flags}${flag.id}/`, { analytics_dashboards: [6] });
      expect(added.body.analytics_dashboards).toEqual([5, 6]);
    });

    it('answers 404 alike for an unknown id, a non-numeric id and another project', async () => {
      const other = await testApp.createOwner('other@flags.test');
      const foreign = (
        await other.api.post(`/api/projects/${other.projectId}/feature_flags/`, { key: 'theirs' })
      ).body;
      for (const path of [`${flags}99999/`, `${flags}abc/`, `${flags}${foreign.id}/`]) {
        const response = await api.get(path);
        expect([path, response.status]).toEqual([path, 404]);
      }
      expect((await other.api.get(`/api/projects/${projectId}/feature_flags/`)).status).toBe(404);
    });
  });

  describe('activity', () => {
    it('records creation and each change with before and after, per flag and for all flags', async () => {
      const flag = await createFlag({ key: 'tracked', filters: rollout(10) });
      await api.patch(`${flags}${flag.id}/`, { name: 'Tracked', filters: rollout(20) });
      const own = await api.get(`${flags}${flag.id}/activity/`);
      expect(own.status).toBe(200);
      expect(Object.keys(own.body).sort()).toEqual(['next', 'previous', 'results', 'total_count']);
      expect(own.body.results.map((entry: { activity: string }) => entry.activity)).toEqual([
        'updated',
        'created',
      ]);
      expect(own.body.results[0]).toMatchObject({
        user: { first_name: expect.any(String), email: ownerEmail },
        scope: 'FeatureFlag',
        item_id: String(flag.id),
        detail: {
          name: 'tracked',
          changes: [
            { type: 'FeatureFlag', action: 'changed', field: 'name', before: '', after: 'Tracked' },
            {
              type: 'FeatureFlag',
              action: 'changed',
              field: 'filters',
              before: rollout(10),
              after: rollout(20),
            },
          ],
        },
        created_at: expect.stringMatching(ISO_8601_PATTERN),
      });
      const all = await api.get(`${flags}activity/?limit=2`);
      expect(all.body.results).toHaveLength(2);
      expect(all.body.next).toContain('page=2');
      expect(all.body.total_count).toBeGreaterThan(2);
    });
  });

  describe('usage dashboards', () => {
    it('creates one with the flag, recreates it on demand, and enriches it only with feature events', async () => {
      const flag = await createFlag({ key: 'dashboarded' });
      const dashboard = await api.post(`${flags}${flag.id}/dashboard/`);
      expect([dashboard.status, dashboard.body]).toEqual([200, { success: true }]);
      const enrich = await api.post(`${flags}${flag.id}/enrich_usage_dashboard/`);
      expect([enrich.status, enrich.body]).toEqual([
        400,
        { success: false, error: 'No enriched analytics available for this feature flag' },
      ]);
      // Once the feature reports views, the dashboard gains their insights, once.
      await insertEvents(clickhouse.client, clickhouse.database, [
        {
          uuid: randomUUID(),
          event: '$feature_view',
          properties: JSON.stringify({ feature_flag: 'dashboarded' }),
          timestamp: '2025-05-01 10:00:00.000000',
          team_id: projectId,
          distinct_id: 'viewer',
          created_at: '2025-05-01 10:00:00.000000',
          person_id: randomUUID(),
        },
      ]);
      const enriched = await api.post(`${flags}${flag.id}/enrich_usage_dashboard/`);
      expect([enriched.status, enriched.body]).toEqual([200, { success: true }]);
      expect((await api.get(`${flags}${flag.id}/`)).body.has_enriched_analytics).toBe(true);
      const again = await api.post(`${flags}${flag.id}/enrich_usage_dashboard/`);
      expect([again.status, again.body]).toEqual([
        400,
        { success: false, error: 'Usage dashboard already has enriched data' },
      ]);
    });
  });

  describe('evaluation actions', () => {
    beforeAll(async () => {
      const persons: [string, Record<string, unknown>][] = [
        ['alice', { email: 'alice@acme.com', plan: 'pro' }],
        ['bob', { email: 'bob@other.org', plan: 'free' }],
        ['carol', { email: 'carol@acme.com', plan: 'free' }],
      ];
      for (const [distinctId, properties] of persons) {
        const [person] = await testApp.dataSource.query<{ id: string }[]>(
          `INSERT INTO persons (uuid, team_id, properties) VALUES ($1, $2, $3) RETURNING id`,
          [randomUUID(), projectId, properties],
        );
        await testApp.dataSource.query(
          `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)`,
          [projectId, distinctId, person.id],
        );
      }
      await createFlag({
        key: 'acme-only',
        filters: rollout(100, [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }]),
      });
      await createFlag({ key: 'switched-off', active: false });
    });

    it('explains each flag for a distinct id', async () => {
      const response = await api.get(`${flags}evaluation_reasons/?distinct_id=alice`);
      expect(response.status).toBe(200);
      expect(response.body['acme-only']).toEqual({
        value: true,
        evaluation: { reason: 'condition_match', condition_index: 0 },
      });
      expect(response.body['switched-off']).toEqual({
        value: false,
        evaluation: { reason: 'disabled', condition_index: null },
      });
      const bob = await api.get(`${flags}evaluation_reasons/?distinct_id=bob`);
      expect(bob.body['acme-only']).toEqual({
        value: false,
        evaluation: { reason: 'no_condition_match', condition_index: 0 },
      });
      const missing = await api.get(`${flags}evaluation_reasons/`);
      expect([missing.status, missing.body.detail]).toEqual([400, 'distinct_id is required']);
    });

    it('counts the blast radius of a condition over the project persons', async () => {
      const response = await api.post(`${flags}user_blast_radius/`, {
        condition: { properties: [{ key: 'plan', value: 'free', type: 'person' }] },
      });
      expect([response.status, response.body]).toEqual([200, { users_affected: 2, total_users: 3 }]);
      const missing = await api.post(`${flags}user_blast_radius/`, {});
      expect([missing.status, missing.body.detail]).toEqual([
        400,
        'Missing condition for which to get blast radius',
      ]);
    });

    it('makes a static cohort of the persons a flag matches, usable in flag filters', async () => {
      const list = await api.get(`${flags}?search=acme-only`);
      const flag = list.body.results[0];
      const response = await api.post(`${flags}${flag.id}/create_static_cohort_for_flag/`);
      expect(response.status).toBe(200);
      expect(response.body.cohort).toMatchObject({
        is_static: true,
        count: 2,
        name: expect.stringMatching(
          /^Users with feature flag acme-only enabled at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
        ),
      });
      const cohortFlag = await createFlag({
        key: 'static-cohort-flag',
        filters: {
          groups: [{ properties: [{ key: 'id', value: response.body.cohort.id, type: 'cohort' }] }],
        },
      });
      const reasons = await api.get(`${flags}evaluation_reasons/?distinct_id=carol`);
      expect(reasons.body[cohortFlag.key].value).toBe(true);
      const bob = await api.get(`${flags}evaluation_reasons/?distinct_id=bob`);
      expect(bob.body[cohortFlag.key].value).toBe(false);
    });

    it('serves local evaluation definitions', async () => {
      const response = await api.get(`${flags}local_evaluation/`);
      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['cohorts', 'flags', 'group_type_mapping']);
      const acme = response.body.flags.find((flag: { key: string }) => flag.key === 'acme-only');
      expect(acme).toMatchObject({
        key: 'acme-only',
        active: true,
        deleted: false,
        filters: expect.any(Object),
      });
    });

    it("answers my_flags for the key's own user", async () => {
      const response = await api.get(`${flags}my_flags/`);
      expect(response.status).toBe(200);
      const entry = response.body.find(
        (item: { feature_flag: { key: string } }) => item.feature_flag.key === 'everyone',
      );
      expect(entry).toEqual({ feature_flag: expect.objectContaining({ key: 'everyone' }), value: true });
    });
  });

  it('lets a member read and an outsider see nothing', async () => {
    const member = await testApp.createMember('member@flags.test', organizationId, MembershipLevel.Member);
    expect((await member.api.get(flags)).status).toBe(200);
    const readOnly = await testApp.createKey('owner@flags.test', ['feature_flag:read']);
    const refused = await testApp.client(`Bearer ${readOnly}`).post(flags, { key: 'nope' });
    expect([refused.status, refused.body.detail]).toEqual([
      403,
      "API key missing required scope 'feature_flag:write'",
    ]);
  });

  describe('edit rights, checked inside the update’s transaction', () => {
    // A member in a "can only view" role needs the flag's role-access links: that read used to go
    // through a second connection while the update held a transaction, which the embedded Postgres
    // never serves, and the request (and the whole instance) hung.
    it('refuses a member with a view-only role a flag the role has no access to, lets it edit one it has, and stays ready', async () => {
      const member = await testApp.createMember('viewer@flags.test', organizationId, MembershipLevel.Member);
      const writeKey = await testApp.createKey('viewer@flags.test', ['feature_flag:write']);
      const viewer = testApp.client(`Bearer ${writeKey}`);
      const roles = `/api/organizations/${organizationId}/roles/`;
      const role = await api.post(roles, { name: 'Flag viewers', feature_flags_access_level: 21 });
      expect(role.status).toBe(201);
      const joined = await api.post(`${roles}${role.body.id}/role_memberships/`, {
        user_uuid: member.user.uuid,
      });
      expect(joined.status).toBe(201);
      const closed = await createFlag({ key: 'closed-to-viewers' });
      const granted = await createFlag({ key: 'granted-to-viewers' });
      const access = await api.post(`${flags}${granted.id}/role_access/`, { role_id: role.body.id });
      expect(access.status).toBe(201);

      const refusedPatch = await withDeadline(
        viewer.patch(`${flags}${closed.id}/`, { name: 'renamed' }),
        "a view-only member's PATCH",
      );
      expect({ status: refusedPatch.status, body: refusedPatch.body }).toEqual({
        status: 403,
        body: {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: "You don't have edit permissions for this feature flag.",
          attr: null,
        },
      });
      const allowed = await withDeadline(
        viewer.patch(`${flags}${granted.id}/`, { name: 'renamed' }),
        'a PATCH the role has access to',
      );
      expect({ status: allowed.status, name: allowed.body.name, canEdit: allowed.body.can_edit }).toEqual({
        status: 200,
        name: 'renamed',
        canEdit: true,
      });
      expect((await withDeadline(testApp.client().get('/_ready'), '/_ready')).status).toBe(200);
      expect((await withDeadline(viewer.get(`${flags}${closed.id}/`), 'a read')).body.can_edit).toBe(false);
    });

    it('checks the cohorts of PATCHed filters inside the transaction', async () => {
      const [cohort] = await testApp.dataSource.query<{ id: number }[]>(
        `INSERT INTO cohorts (team_id, name, filters) VALUES ($1, 'Patched pros', $2) RETURNING id`,
        [projectId, { properties: { type: 'AND', values: [{ type: 'person', key: 'plan', value: 'pro' }] } }],
      );
      const flag = await createFlag({ key: 'cohort-patched' });
      const filters = { groups: [{ properties: [{ key: 'id', value: cohort.id, type: 'cohort' }] }] };
      const patched = await withDeadline(
        api.patch(`${flags}${flag.id}/`, { filters }),
        'PATCH with a cohort',
      );
      expect({ status: patched.status, filters: patched.body.filters }).toMatchObject({
        status: 200,
        filters,
      });
      const missing = await withDeadline(
        api.patch(`${flags}${flag.id}/`, {
          filters: { groups: [{ properties: [{ key: 'id', value: 999999, type: 'cohort' }] }] },
        }),
        'PATCH with a missing cohort',
      );
      expect(missing.body).toMatchObject({ code: 'cohort_does_not_exist', attr: 'filters' });
    });
  });

  describe('paging bounds', () => {
    it.each(['99999999999999999999', '2000001', '0', '-1', 'two', '1.5'])(
      'answers 400 on attr page for the activity page %s',
      async (page) => {
        const response = await api.get(`${flags}activity/?page=${page}`);
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({ type: 'validation_error', code: 'invalid', attr: 'page' });
      },
    );

    it('answers the last allowed activity page, and caps the activity limit', async () => {
      const last = await api.get(`${flags}activity/?page=2000000&limit=99999999999999999999`);
      expect({ status: last.status, results: last.body.results }).toEqual({ status: 200, results: [] });
      expect(last.body.previous).toContain('limit=1000');
    });

    it('reads a limit or offset past the Postgres range as the largest one, as an empty page', async () => {
      const huge = '99999999999999999999';
      const response = await api.get(`${flags}?limit=${huge}&offset=${huge}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ results: [], next: null });
      expect(response.body.count).toBeGreaterThan(0);
    });
  });
});
