import { randomUUID } from 'node:crypto';
import { insertEvents } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { projectPathOf, routeTable, RouteEntry } from '@hogbase/management-api';
import { eventually } from '@hogbase/test-support';
import {
  BatchExportBackfill,
  BatchExportRun,
  MembershipLevel,
  OrganizationDomain,
  Plugin,
  PluginConfig,
  Team,
  User,
} from '@hogbase/postgres';
import {
  ApiClient,
  ApiResponse,
  ManagementTestApp,
  startManagementTestApp,
  TestUser,
} from './management-test-app';

/**
 * The scope matrix: every route of the route table × every kind of personal API key × every kind
 * of target organization, asserting the access guard's decision.
 *
 * Keys (all of user U unless said): `full` (`*`), `organization` (`*`, scoped to organization A),
 * `project` (`*`, scoped to A's project), `missingScope` (one scope the route does not need: the
 * `:read` of a `:write` route's object, another object's `:write` for a `:read` route),
 * `exactScope` (exactly the scope the route needs), `revoked`.
 * Targets: `own` (A and its project), `sibling` (B, another organization of U, and its project),
 * `foreign` (C, an organization of another user, and its project). Routes that name no
 * organization or project (list, create, `users/@me`) have the single target `none`.
 *
 * Refusals are exact: 401, 403 with its detail, 404 with its detail. An allowed cell must show
 * that the guard let the request through, without destroying the fixtures:
 * - GET answers 2xx on real resources (the event listing reads a real chDB database);
 * - POST and PATCH with a DTO body send `[]`, which only the validation pipe answers, after the
 *   guard: 400 `Invalid data. Expected a dictionary, but got list.`;
 * - routes whose body is not a DTO, or that take none, have a probe in PROBES that the service
 *   answers after the guard (a validation failure, or a harmless action);
 * - DELETE and `reset_token` run for real (204/200) on a fresh organization of the same owner
 *   standing in for the target, with the organization- and project-scoped keys re-scoped to it
 *   when it stands for A; refused cells on those routes use fresh stand-ins too, so a guard that
 *   wrongly lets one through destroys nothing the other cells need.
 * The guard only ever answers 401, 403 or 404, and every id of an allowed cell exists, so none of
 * these answers can be mistaken for a guard decision.
 */
describe('scope matrix', () => {
  type KeyKind = 'full' | 'organization' | 'project' | 'missingScope' | 'exactScope' | 'revoked';
  type TargetKind = 'own' | 'sibling' | 'foreign' | 'none';

  /** An organization with one of each child resource, named by the path segment that holds its id. */
  interface World {
    organizationId: string;
    projectId: number;
    ids: Record<string, string>;
  }

  interface Outcome {
    cell: string;
    status: number;
    detail?: string;
  }

  interface Probe {
    query?: string;
    body?: unknown;
    status: number;
    detail?: string;
    /** Consumes its resource: runs on a fresh stand-in organization. */
    consumes?: boolean;
  }

  const DICTIONARY_EXPECTED = 'Invalid data. Expected a dictionary, but got list.';

  const BACKFILL_PROBE: Probe = {
    body: { start_at: '2026-01-02T00:00:00Z', end_at: '2026-01-01T00:00:00Z' },
    status: 400,
    detail: "The initial backfill datetime 'start_at' happens after 'end_at'",
  };

  /** Post-guard probes of routes the default rules (GET 200, DTO body `[]` → 400, DELETE 204) do not fit. */
  const PROBES: Record<string, Probe> = {
    'GET /api/projects/:project_id/feature_flags/evaluation_reasons': {
      query: '?distinct_id=probe',
      status: 200,
    },
    'GET /api/projects/:project_id/events/values': { query: '?key=$browser', status: 200 },
    'POST /api/organizations/:organization_id/invites/bulk': {
      body: [],
      status: 400,
      detail: 'This list may not be empty.',
    },
    'POST /api/organizations/:organization_id/domains/:id/verify': {
      status: 400,
      detail: 'This domain has already been verified.',
    },
    'POST /api/projects/:project_id/feature_flags/user_blast_radius': {
      body: [],
      status: 400,
      detail: 'Missing condition for which to get blast radius',
    },
    'POST /api/projects/:project_id/feature_flags/:id/create_static_cohort_for_flag': { status: 200 },
    'POST /api/projects/:project_id/feature_flags/:id/dashboard': { status: 200 },
    'POST /api/projects/:project_id/feature_flags/:id/enrich_usage_dashboard': { status: 400 },
    'DELETE /api/projects/:project_id/feature_flags/:id': { status: 405 },
    // The world's async query has finished: cancelling it answers so, and leaves its status.
    'DELETE /api/projects/:project_id/query/:id': { status: 200 },
    'PATCH /api/projects/:id/reset_token': { status: 200, consumes: true },
    'POST /api/projects/:project_id/project_secret_api_keys/:id/roll': { status: 200 },
    'POST /api/organizations/:organization_id/batch_exports/:id/backfill': BACKFILL_PROBE,
    'POST /api/organizations/:organization_id/batch_exports/:id/backfills': BACKFILL_PROBE,
    'POST /api/organizations/:organization_id/batch_exports/:id/runs/:run_id/retry': { status: 200 },
    'POST /api/organizations/:organization_id/batch_exports/:id/runs/:run_id/cancel': {
      status: 200,
      consumes: true,
    },
    'POST /api/projects/:project_id/batch_exports/:id/backfill': BACKFILL_PROBE,
    'POST /api/projects/:project_id/batch_exports/:id/backfills': BACKFILL_PROBE,
    'POST /api/projects/:project_id/batch_exports/:id/runs/:run_id/retry': { status: 200 },
    'POST /api/projects/:project_id/batch_exports/:id/runs/:run_id/cancel': { status: 200, consumes: true },
    'POST /api/organizations/:organization_id/batch_exports/:id/pause': { status: 200 },
    'POST /api/projects/:project_id/batch_exports/:id/pause': { status: 200 },
  };

  /** Routes that act beyond what a restricted key covers, refused to such keys whatever they name. */
  const REFUSED_TO_RESTRICTED_KEYS: Record<string, { keys: KeyKind[]; detail: string }> = {
    'POST /api/organizations': {
      keys: ['organization', 'project'],
      detail: 'API keys scoped to organizations or projects cannot create organizations.',
    },
    'POST /api/projects': {
      keys: ['project'],
      detail: 'API keys scoped to projects cannot create projects.',
    },
    'POST /api/organizations/:organization_id/projects': {
      keys: ['project'],
      detail: 'API keys scoped to projects cannot create projects.',
    },
    'DELETE /api/organizations/:id': {
      keys: ['project'],
      detail: 'API keys scoped to projects cannot delete organizations.',
    },
  };

  /** Which fixture a path parameter names; `:id` is named by the segment before it. */
  const PARAMETER_COLLECTIONS: Record<string, string> = {
    organization_id: 'organizations',
    project_id: 'projects',
    environment_id: 'projects',
    role_id: 'roles',
    feature_flag_id: 'feature_flags',
    backfill_id: 'backfills',
    run_id: 'runs',
    user__uuid: 'members',
  };

  let testApp: ManagementTestApp;
  let clickhouse: TestClickHouse;
  let routes: RouteEntry[];
  let owner: TestUser & { organizationId: string; projectId: number };
  let stranger: TestUser & { organizationId: string; projectId: number };
  let own: World;
  let sibling: World;
  let foreign: World;
  let ownSecondProject: { id: number; apiToken: string };
  const keys: Partial<Record<KeyKind, string>> = {};
  let worldCount = 0;

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    routes = routeTable(testApp.app).filter((route) => route.rule?.scope !== 'public');

    owner = await testApp.createOwner('owner@scope-matrix.test', 'Organization A');
    stranger = await testApp.createOwner('stranger@scope-matrix.test', 'Organization C');
    own = await populateWorld(owner.api, owner.organizationId, owner.projectId, { events: true });
    sibling = await createWorld(owner.api, 'Organization B', { events: true });
    foreign = await populateWorld(stranger.api, stranger.organizationId, stranger.projectId, {
      events: true,
    });
    const second = await owner.api.post(`/api/organizations/${own.organizationId}/projects/`, {
      name: 'A second project',
    });
    expect(second.status).toBe(201);
    ownSecondProject = { id: second.body.id, apiToken: second.body.api_token };
    await restoreCurrentContext();

    keys.full = owner.key;
    keys.organization = await testApp.createKey(owner.user.email, ['*'], {
      organizations: [own.organizationId],
    });
    keys.project = await testApp.createKey(owner.user.email, ['*'], { projects: [own.projectId] });
    keys.revoked = await testApp.createKey(owner.user.email, ['*']);
    await testApp.bootstrap.revokePersonalApiKey(keys.revoked);
  }, 120_000);

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  /** U's current organization stays A: `POST /api/projects/` creates there. */
  async function restoreCurrentContext(): Promise<void> {
    await testApp.dataSource
      .getRepository(User)
      .update(
        { id: owner.user.id },
        { currentOrganizationId: own.organizationId, currentTeamId: own.projectId },
      );
  }

  async function createWorld(
    api: ApiClient,
    name: string,
    options: { events?: boolean } = {},
  ): Promise<World> {
    const created = await api.post('/api/organizations/', { name });
    expect(created.status).toBe(201);
    const world = await populateWorld(api, created.body.id, created.body.teams[0].id, options);
    await restoreCurrentContext();
    return world;
  }

  async function populateWorld(
    api: ApiClient,
    organizationId: string,
    projectId: number,
    options: { events?: boolean },
  ): Promise<World> {
    const label = `world-${++worldCount}`;
    const organization = `/api/organizations/${organizationId}`;
    const flags = `/api/projects/${projectId}/feature_flags`;
    const member = await testApp.createMember(
      `${label}@members.test`,
      organizationId,
      MembershipLevel.Member,
    );
    const invite = await api.post(`${organization}/invites/`, { target_email: `${label}@invited.test` });
    const domain = await api.post(`${organization}/domains/`, { domain: `${label}.scope-matrix.test` });
    const role = await api.post(`${organization}/roles/`, { name: `Role of ${label}` });
    const roleMembership = await api.post(`${organization}/roles/${role.body.id}/role_memberships/`, {
      user_uuid: member.user.uuid,
    });
    const flag = await api.post(`${flags}/`, {
      key: `flag-${label}`,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    const roleAccess = await api.post(`${flags}/${flag.body.id}/role_access/`, { role_id: role.body.id });
    const secretKey = await api.post(`/api/projects/${projectId}/project_secret_api_keys/`, {
      label: `Key of ${label}`,
      scopes: ['feature_flag:read'],
    });
    const query = await api.post(`/api/projects/${projectId}/query/`, {
      query: { kind: 'HogQLQuery', query: 'select 1' },
      refresh: 'force_async',
    });
    expect(query.status).toBe(202);
    const queryId = query.body.query_status.id as string;
    await eventually(
      'the async query to finish',
      async () => (await api.get(`/api/projects/${projectId}/query/${queryId}/`)).status === 200,
    );
    const batchExport = await api.post(`${organization}/batch_exports/`, {
      name: `Export of ${label}`,
      interval: 'day',
      destination: { type: 'NoOp', config: {} },
      team_id: projectId,
    });
    expect(
      [invite, domain, role, roleMembership, flag, roleAccess, batchExport, secretKey].map(
        (response) => response.status,
      ),
    ).toEqual([201, 201, 201, 201, 201, 201, 201, 201]);
    // A backfill of one interval and its run, as the API would have made them (that needs events).
    const backfillId = randomUUID();
    const runId = randomUUID();
    await testApp.dataSource.getRepository(BatchExportBackfill).insert({
      id: backfillId,
      batchExportId: batchExport.body.id,
      teamId: projectId,
      totalRuns: 1,
    });
    await testApp.dataSource.getRepository(BatchExportRun).insert({
      id: runId,
      batchExportId: batchExport.body.id,
      backfillId,
      dataIntervalStart: new Date('2026-01-01T00:00:00Z'),
      dataIntervalEnd: new Date('2026-01-01T01:00:00Z'),
    });
    // Verified, so that `verify` answers from the service without a DNS lookup.
    await testApp.dataSource
      .getRepository(OrganizationDomain)
      .update({ id: domain.body.id }, { verifiedAt: new Date() });
    // One app of each collection (source apps: no download, no update check leaves the machine)
    // and a config of the destination in the project, as the API and the plugin server leave them.
    const apps = await testApp.dataSource.getRepository(Plugin).save(
      [
        { methods: ['composeWebhook'], jobs: [], scheduled_tasks: [] },
        {},
        { methods: [], jobs: [], scheduled_tasks: ['runEveryHour'] },
        { methods: ['processEvent'], jobs: [], scheduled_tasks: [] },
      ].map((capabilities, index) =>
        testApp.dataSource.getRepository(Plugin).create({
          organizationId,
          pluginType: 'source',
          name: `App ${index} of ${label}`,
          capabilities,
        }),
      ),
    );
    const pluginConfig = await testApp.dataSource.getRepository(PluginConfig).save(
      testApp.dataSource.getRepository(PluginConfig).create({
        pluginId: apps[0].id,
        teamId: projectId,
        webToken: `web-token-of-${label}-0123456789abcdef`,
      }),
    );
    const eventUuid = randomUUID();
    if (options.events) {
      const now = new Date().toISOString().replace('T', ' ').replace('Z', '000');
      await insertEvents(clickhouse.client, clickhouse.database, [
        {
          uuid: eventUuid,
          event: '$pageview',
          properties: JSON.stringify({ $browser: 'Firefox' }),
          timestamp: now,
          team_id: projectId,
          distinct_id: `visitor-${label}`,
          created_at: now,
          person_id: randomUUID(),
        },
      ]);
    }
    return {
      organizationId,
      projectId,
      ids: {
        organizations: organizationId,
        projects: String(projectId),
        environments: String(projectId),
        invites: invite.body.id,
        domains: domain.body.id,
        roles: role.body.id,
        role_memberships: roleMembership.body.id,
        members: member.user.uuid,
        feature_flags: String(flag.body.id),
        role_access: String(roleAccess.body.id),
        batch_exports: batchExport.body.id,
        backfills: backfillId,
        runs: runId,
        events: eventUuid,
        personal_api_keys: '@current',
        pipeline_destinations: String(apps[0].id),
        pipeline_frontend_apps: String(apps[1].id),
        pipeline_import_apps: String(apps[2].id),
        pipeline_transformations: String(apps[3].id),
        plugin_configs: String(pluginConfig.id),
        project_secret_api_keys: secretKey.body.id,
        query: queryId,
      },
    };
  }

  const routeName = (route: RouteEntry) => `${route.method} ${route.path}`;
  /** The tables below name a route by its /api/projects/ path: its environment twin shares its entry. */
  const tableName = (route: RouteEntry) => `${route.method} ${projectPathOf(route.path)}`;

  function targetsOf(route: RouteEntry): TargetKind[] {
    return route.rule?.organizationParam || route.rule?.projectParam
      ? ['own', 'sibling', 'foreign']
      : ['none'];
  }

  function concretePath(route: RouteEntry, world: World): string {
    const segments = route.path.split('/');
    const resolved = segments.map((segment, index) => {
      if (!segment.startsWith(':')) return segment;
      const name = segment.slice(1);
      const collection = name === 'id' ? segments[index - 1] : PARAMETER_COLLECTIONS[name];
      const id = world.ids[collection];
      if (id === undefined) throw new Error(`no fixture for ${segment} in ${routeName(route)}: add one`);
      return id;
    });
    return `${resolved.join('/')}/`;
  }

  function missingScopeFor(scope: string): string {
    const [object, action] = scope.split(':');
    if (action === 'write') return `${object}:read`;
    return object === 'organization' ? 'organization_member:write' : 'organization:write';
  }

  function probeFor(route: RouteEntry): Probe {
    const listed = PROBES[tableName(route)];
    if (listed) return listed;
    if (route.method === 'GET') return { status: 200 };
    if (route.method === 'DELETE') return { status: 204, consumes: true };
    return { body: [], status: 400, detail: DICTIONARY_EXPECTED };
  }

  /** The guard's decision under the rules of the issue, or the probe's answer when it lets the request through. */
  function expectedOutcome(route: RouteEntry, key: KeyKind, target: TargetKind, world: World): Outcome {
    const cell = `${routeName(route)} | ${key} key | ${target}`;
    const isProjectRoute = Boolean(
      route.rule?.projectParam && route.path.includes(`:${route.rule.projectParam}`),
    );
    if (key === 'revoked') {
      return {
        cell,
        status: 401,
        detail: 'Personal API key found in request Authorization header is invalid.',
      };
    }
    if (key === 'missingScope') {
      return { cell, status: 403, detail: `API key missing required scope '${route.rule!.scope}'` };
    }
    if (target === 'foreign') {
      return { cell, status: 404, detail: isProjectRoute ? 'Project not found.' : 'Not found.' };
    }
    if (target === 'sibling' && (key === 'organization' || key === 'project')) {
      const detail =
        isProjectRoute && key === 'project'
          ? `API key does not have access to the requested project: ID ${world.projectId}.`
          : `API key does not have access to the requested organization: ID ${world.organizationId}.`;
      return { cell, status: 403, detail };
    }
    const refusal = REFUSED_TO_RESTRICTED_KEYS[tableName(route)];
    if (refusal?.keys.includes(key)) return { cell, status: 403, detail: refusal.detail };
    const probe = probeFor(route);
    return { cell, status: probe.status, ...(probe.detail ? { detail: probe.detail } : {}) };
  }

  /** Keys created for one cell (re-scoped to a stand-in, or one-scope keys), revoked after it. */
  const temporaryKeys: string[] = [];

  async function temporaryKey(scopes: string[], options?: { organizations?: string[]; projects?: number[] }) {
    const key = await testApp.createKey(owner.user.email, scopes, options);
    temporaryKeys.push(key);
    return key;
  }

  async function revokeTemporaryKeys(): Promise<void> {
    for (const key of temporaryKeys.splice(0)) await testApp.bootstrap.revokePersonalApiKey(key);
  }

  /** The world a cell acts on, and the key it uses there. */
  async function cellSetup(
    route: RouteEntry,
    key: KeyKind,
    target: TargetKind,
  ): Promise<{ world: World; authorization: string }> {
    const probe = probeFor(route);
    const needsStandIn =
      probe.consumes === true && target !== 'none' && key !== 'revoked' && key !== 'missingScope';
    let world = { own, sibling, foreign, none: own }[target];
    if (needsStandIn) {
      world =
        target === 'foreign'
          ? await createWorld(stranger.api, `Stand-in C ${worldCount}`)
          : await createWorld(owner.api, `Stand-in ${target} ${worldCount}`);
    }
    let secret: string;
    switch (key) {
      case 'full':
      case 'revoked':
        secret = keys[key]!;
        break;
      case 'organization':
        secret =
          needsStandIn && target === 'own'
            ? await temporaryKey(['*'], { organizations: [world.organizationId] })
            : keys.organization!;
        break;
      case 'project':
        secret =
          needsStandIn && target === 'own'
            ? await temporaryKey(['*'], { projects: [world.projectId] })
            : keys.project!;
        break;
      case 'missingScope':
        secret = await temporaryKey([missingScopeFor(route.rule!.scope)]);
        break;
      case 'exactScope':
        secret = await temporaryKey([route.rule!.scope]);
        break;
    }
    return { world, authorization: `Bearer ${secret}` };
  }

  /**
   * An /api/environments/ twin runs its /api/projects/ route's handler under the same rule (the
   * environments e2e asserts both): it is walked only with the keys whose answer depends on how
   * the guard reads the path's project, which keeps this suite's time from doubling.
   */
  const TWIN_KEY_KINDS = new Set<KeyKind>(['full', 'project']);
  const walkedFor = (keyKinds: KeyKind[]) =>
    routes.filter(
      (route) => projectPathOf(route.path) === route.path || keyKinds.every((key) => TWIN_KEY_KINDS.has(key)),
    );

  async function walk(keyKinds: KeyKind[]): Promise<{ expected: Outcome[]; actual: Outcome[] }> {
    const expected: Outcome[] = [];
    const actual: Outcome[] = [];
    for (const route of walkedFor(keyKinds)) {
      for (const key of keyKinds) {
        for (const target of targetsOf(route)) {
          const { world, authorization } = await cellSetup(route, key, target);
          const probe = probeFor(route);
          const outcome = expectedOutcome(route, key, target, world);
          const response: ApiResponse = await testApp
            .client(authorization)
            .request(route.method, `${concretePath(route, world)}${probe.query ?? ''}`, {
              body: probe.body,
            });
          expected.push(outcome);
          actual.push({
            cell: outcome.cell,
            status: response.status,
            ...(outcome.detail !== undefined ? { detail: response.body?.detail } : {}),
          });
          await revokeTemporaryKeys();
        }
      }
    }
    return { expected, actual };
  }

  it('walks a route table that names a fixture for every parameter and a probe for every write', () => {
    expect(routes.length).toBeGreaterThan(50);
    for (const route of routes) {
      expect(() => concretePath(route, own)).not.toThrow();
      expect(route.rule?.scope).toMatch(/^[a-z_]+:(read|write)$/);
    }
    // Every listed probe and refusal names a route that exists, so a renamed route cannot escape them.
    const names = new Set(routes.map(routeName));
    expect(
      Object.keys({ ...PROBES, ...REFUSED_TO_RESTRICTED_KEYS }).filter((name) => !names.has(name)),
    ).toEqual([]);
  });

  it.each<[string, KeyKind[]]>([
    ['answers 401 to a revoked key on every route, whatever it names', ['revoked']],
    ['answers 403 naming the scope to a key without it, before looking up any id', ['missingScope']],
    ['lets a key with exactly the needed scope through in its organizations, 404 elsewhere', ['exactScope']],
    ['lets a full key through in every organization of its user, 404 in others', ['full']],
    [
      'confines an organization-scoped key to its organization (403 in the sibling, 404 foreign)',
      ['organization'],
    ],
    [
      'confines a project-scoped key to the organization of its project (403 in the sibling, 404 foreign)',
      ['project'],
    ],
  ])(
    '%s',
    async (_name, keyKinds) => {
      const { expected, actual } = await walk(keyKinds);
      expect(actual).toEqual(expected);
    },
    240_000,
  );

  describe('the report, replayed with a key created by create-key --projects <A project>', () => {
    let client: ApiClient;

    beforeAll(() => {
      client = testApp.client(`Bearer ${keys.project}`);
    });

    const sectionOf = (organizationId: string) => `/api/organizations/${organizationId}`;

    it('answers 403 to GET, PATCH and DELETE of another organization of the same user, which still exists', async () => {
      const path = `${sectionOf(sibling.organizationId)}/`;
      const refusal = {
        status: 403,
        body: {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: `API key does not have access to the requested organization: ID ${sibling.organizationId}.`,
          attr: null,
        },
      };
      for (const response of [
        await client.get(path),
        await client.patch(path, { name: 'Renamed by a project key' }),
        await client.delete(path),
      ]) {
        expect({ status: response.status, body: response.body }).toEqual(refusal);
      }
      const still = await owner.api.get(path);
      expect([still.status, still.body.name]).toEqual([200, 'Organization B']);
    });

    it("refuses the other organization's members, invites, domains, roles and role memberships", async () => {
      const section = sectionOf(sibling.organizationId);
      const calls: [string, string, unknown?][] = [
        ['GET', `${section}/members/`],
        ['PATCH', `${section}/members/${sibling.ids.members}/`, { level: MembershipLevel.Admin }],
        ['DELETE', `${section}/members/${sibling.ids.members}/`],
        ['GET', `${section}/invites/`],
        ['POST', `${section}/invites/`, { target_email: 'sneaky@invited.test' }],
        ['POST', `${section}/invites/bulk/`, [{ target_email: 'sneakier@invited.test' }]],
        ['DELETE', `${section}/invites/${sibling.ids.invites}/`],
        ['GET', `${section}/domains/`],
        ['GET', `${section}/domains/${sibling.ids.domains}/`],
        ['POST', `${section}/domains/`, { domain: 'sneaky.scope-matrix.test' }],
        ['GET', `${section}/roles/`],
        ['POST', `${section}/roles/`, { name: 'Sneaky role' }],
        ['GET', `${section}/roles/${sibling.ids.roles}/role_memberships/`],
        ['POST', `${section}/roles/${sibling.ids.roles}/role_memberships/`, { user_uuid: owner.user.uuid }],
        ['GET', `${section}/projects/`],
      ];
      for (const [method, path, body] of calls) {
        const response = await client.request(method, path, { body });
        expect({ call: `${method} ${path}`, status: response.status }).toEqual({
          call: `${method} ${path}`,
          status: 403,
        });
        expect(JSON.stringify(response.body)).not.toContain('verification_challenge');
      }
      const invites = await owner.api.get(`${section}/invites/`);
      expect(invites.body.results.map((invite: { id: string }) => invite.id)).toEqual([sibling.ids.invites]);
      const members = await owner.api.get(`${section}/members/`);
      const fixtureMember = members.body.results.find(
        (member: { user: { uuid: string } }) => member.user.uuid === sibling.ids.members,
      );
      expect(fixtureMember?.level).toBe(MembershipLevel.Member);
      const domains = await owner.api.get(`${section}/domains/`);
      expect(domains.body.results.map((domain: { id: string }) => domain.id)).toEqual([sibling.ids.domains]);
      const roles = await owner.api.get(`${section}/roles/`);
      expect(roles.body.results.map((role: { id: string }) => role.id)).toEqual([sibling.ids.roles]);
    });

    it("lists only the key's projects in its organization's body, without other projects' api_token", async () => {
      const response = await client.get(`${sectionOf(own.organizationId)}/`);
      expect(response.status).toBe(200);
      expect(response.body.teams.map((team: { id: number }) => team.id)).toEqual([own.projectId]);
      expect(JSON.stringify(response.body)).not.toContain(ownSecondProject.apiToken);
    });

    it("lists only its project's organization, its project, and no other project's api_token anywhere", async () => {
      const tokens = await testApp.dataSource.getRepository(Team).find();
      const otherTokens = tokens.filter((team) => team.id !== own.projectId).map((team) => team.apiToken);
      expect(otherTokens.length).toBeGreaterThan(2);

      const organizations = await client.get('/api/organizations/');
      expect(organizations.body.count).toBe(1);
      expect(organizations.body.results.map((organization: { id: string }) => organization.id)).toEqual([
        own.organizationId,
      ]);
      expect(organizations.body.results[0].teams.map((team: { id: number }) => team.id)).toEqual([
        own.projectId,
      ]);

      const projects = await client.get('/api/projects/');
      expect(projects.body.results.map((project: { id: number }) => project.id)).toEqual([own.projectId]);
      const organizationProjects = await client.get(`${sectionOf(own.organizationId)}/projects/`);
      expect(organizationProjects.body.results.map((project: { id: number }) => project.id)).toEqual([
        own.projectId,
      ]);

      const me = await client.get('/api/users/@me/');
      expect(me.status).toBe(200);
      for (const response of [organizations, projects, organizationProjects, me]) {
        for (const token of otherTokens) expect(JSON.stringify(response.body)).not.toContain(token);
      }
    });

    it('refuses to create an organization or a project, in its own organization too', async () => {
      const before = await testApp.dataSource.getRepository(Team).count();
      const attempts = [
        await client.post('/api/organizations/', { name: 'Made by a project key' }),
        await client.post('/api/projects/', { name: 'Made by a project key' }),
        await client.post(`${sectionOf(own.organizationId)}/projects/`, { name: 'Made by a project key' }),
      ];
      expect(attempts.map((response) => [response.status, response.body.detail])).toEqual([
        [403, 'API keys scoped to organizations or projects cannot create organizations.'],
        [403, 'API keys scoped to projects cannot create projects.'],
        [403, 'API keys scoped to projects cannot create projects.'],
      ]);
      expect(await testApp.dataSource.getRepository(Team).count()).toBe(before);
    });
  });

  describe('an organization-scoped key', () => {
    it('lists only its organizations, with all of their projects, and creates projects only there', async () => {
      const client = testApp.client(`Bearer ${keys.organization}`);
      const organizations = await client.get('/api/organizations/');
      expect(organizations.body.results.map((organization: { id: string }) => organization.id)).toEqual([
        own.organizationId,
      ]);
      expect(organizations.body.results[0].teams.map((team: { id: number }) => team.id)).toEqual([
        own.projectId,
        ownSecondProject.id,
      ]);
      const refused = await client.post('/api/organizations/', { name: 'Made by an organization key' });
      expect([refused.status, refused.body.detail]).toEqual([
        403,
        'API keys scoped to organizations or projects cannot create organizations.',
      ]);
      const elsewhere = await client.post(`/api/organizations/${sibling.organizationId}/projects/`, {
        name: 'Made elsewhere',
      });
      expect([elsewhere.status, elsewhere.body.detail]).toEqual([
        403,
        `API key does not have access to the requested organization: ID ${sibling.organizationId}.`,
      ]);
    });
  });

  it('left the other organizations and their resources as they were', async () => {
    for (const world of [sibling, foreign]) {
      const api = world === foreign ? stranger.api : owner.api;
      const section = `/api/organizations/${world.organizationId}`;
      expect((await api.get(`${section}/`)).status).toBe(200);
      expect((await api.get(`/api/projects/${world.projectId}/`)).status).toBe(200);
      expect(
        (await api.get(`${section}/invites/`)).body.results.map((invite: { id: string }) => invite.id),
      ).toEqual([world.ids.invites]);
      expect((await api.get(`${section}/domains/${world.ids.domains}/`)).status).toBe(200);
      expect((await api.get(`${section}/roles/${world.ids.roles}/`)).status).toBe(200);
      expect(
        (await api.get(`/api/projects/${world.projectId}/feature_flags/${world.ids.feature_flags}/`)).status,
      ).toBe(200);
    }
  });
});
