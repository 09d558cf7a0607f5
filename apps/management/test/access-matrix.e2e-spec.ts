import { randomUUID } from 'node:crypto';
import { routeTable, RouteEntry } from '@hogbase/management-api';
import { MembershipLevel, OrganizationMembership } from '@hogbase/postgres';
import { v7 as uuidv7 } from 'uuid';
import { ApiClient, ApiResponse, ManagementTestApp, startManagementTestApp } from './management-test-app';

/**
 * The access matrix: every route of the route table, times every kind of caller that must be
 * refused, answers the right status and never shows a resource of the organization it probes.
 * The table comes from the app itself, so a new route is covered (or fails) without edits here.
 */
describe('access matrix', () => {
  let testApp: ManagementTestApp;
  let routes: RouteEntry[];
  let target: {
    organizationId: string;
    projectId: number;
    projectApiKey: string;
    inviteId: string;
    domainId: string;
    memberUuid: string;
    memberEmail: string;
    ownerEmail: string;
  };
  const callers: Record<string, ApiClient> = {};

  beforeAll(async () => {
    testApp = await startManagementTestApp();
    routes = routeTable(testApp.app);

    const owner = await testApp.createOwner('owner@target.test', 'Target organization');
    const outsider = await testApp.createOwner('outsider@other.test', 'Other organization');
    const member = await testApp.createMember(
      'member@target.test',
      owner.organizationId,
      MembershipLevel.Member,
    );
    const invite = await owner.api.post(`/api/organizations/${owner.organizationId}/invites/`, {
      target_email: 'invited@target.test',
    });
    const domain = await owner.api.post(`/api/organizations/${owner.organizationId}/domains/`, {
      domain: 'target.test',
    });
    expect([invite.status, domain.status]).toEqual([201, 201]);
    target = {
      organizationId: owner.organizationId,
      projectId: owner.projectId,
      projectApiKey: owner.projectApiKey,
      inviteId: invite.body.id,
      domainId: domain.body.id,
      memberUuid: member.user.uuid,
      memberEmail: 'member@target.test',
      ownerEmail: 'owner@target.test',
    };

    // The owner also belongs to the other organization, so a key scoped there is a valid key of a member.
    await testApp.dataSource.getRepository(OrganizationMembership).insert({
      id: uuidv7(),
      organizationId: outsider.organizationId,
      userId: owner.user.id,
      level: MembershipLevel.Member,
    });
    const revoked = await testApp.createKey('owner@target.test', ['*']);
    await testApp.bootstrap.revokePersonalApiKey(revoked);

    callers.none = testApp.client();
    callers.notBearer = testApp.client(`Basic ${Buffer.from('owner:secret').toString('base64')}`);
    callers.malformed = testApp.client('Bearer phx_not-a-real-key');
    callers.revoked = testApp.client(`Bearer ${revoked}`);
    // A project secret key reads flag definitions on capture, and is no credential here at all.
    const secretKey = await owner.api.post(`/api/projects/${owner.projectId}/project_secret_api_keys/`, {
      label: 'Local evaluation',
      scopes: ['feature_flag:read'],
    });
    expect(secretKey.status).toBe(201);
    callers.projectSecretKey = testApp.client(`Bearer ${secretKey.body.value}`);
    callers.unrelatedScope = testApp.client(
      `Bearer ${await testApp.createKey('owner@target.test', ['insight:read'])}`,
    );
    callers.otherOrganizationKey = testApp.client(
      `Bearer ${await testApp.createKey('owner@target.test', ['*'], { organizations: [outsider.organizationId] })}`,
    );
    callers.outsider = outsider.api;
    callers.member = member.api;
    callers.owner = owner.api;
  });

  afterAll(async () => {
    await testApp?.close();
  });

  function concretePath(route: RouteEntry): string {
    const resourceId = route.path.includes('/invites/')
      ? target.inviteId
      : route.path.includes('/domains/')
        ? target.domainId
        : /^\/api\/(projects|environments)\//.test(route.path)
          ? String(target.projectId)
          : route.path.startsWith('/api/personal_api_keys/')
            ? '@current'
            : target.organizationId;
    return `${route.path
      .replace(':organization_id', target.organizationId)
      .replace(':project_id', String(target.projectId))
      .replace(':environment_id', String(target.projectId))
      .replace(':user__uuid', target.memberUuid)
      .replace(':id', resourceId)}/`;
  }

  function call(caller: ApiClient, route: RouteEntry): Promise<ApiResponse> {
    return caller.request(route.method, concretePath(route), {
      body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
    });
  }

  /** What a refused caller must never see. The organization id is itself a secret to outsiders. */
  function expectNoLeak(
    response: ApiResponse,
    { organizationIdIsSecret }: { organizationIdIsSecret: boolean },
  ) {
    const text = JSON.stringify(response.body);
    const secrets = [
      target.projectApiKey,
      target.inviteId,
      target.domainId,
      target.memberEmail,
      target.ownerEmail,
      target.memberUuid,
    ];
    if (organizationIdIsSecret) secrets.push(target.organizationId);
    for (const secret of secrets) expect(text).not.toContain(secret);
  }

  const scoped = (route: RouteEntry) => Boolean(route.rule?.organizationParam || route.rule?.projectParam);

  it('finds a declared access rule on every route', () => {
    expect(routes.length).toBeGreaterThan(20);
    const undeclared = routes.filter((route) => !route.rule).map((route) => `${route.method} ${route.path}`);
    expect(undeclared).toEqual([]);
  });

  it('publishes every non-public route with its scope in the OpenAPI document', async () => {
    const { body: document } = await testApp.client().get('/api/schema/');
    for (const route of routes.filter((entry) => entry.rule?.scope !== 'public')) {
      const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[openApiPath]?.[route.method.toLowerCase()];
      expect({ route: `${route.method} ${route.path}`, security: operation?.security }).toEqual({
        route: `${route.method} ${route.path}`,
        security: [{ PersonalAPIKey: [route.rule!.scope] }],
      });
    }
  });

  it('answers 401 with WWW-Authenticate to a request without credentials, on every route', async () => {
    for (const route of routes.filter((entry) => entry.rule?.scope !== 'public')) {
      for (const caller of [callers.none, callers.notBearer]) {
        const response = await call(caller, route);
        expect({
          route: `${route.method} ${route.path}`,
          status: response.status,
          body: response.body,
        }).toEqual({
          route: `${route.method} ${route.path}`,
          status: 401,
          body: {
            type: 'authentication_error',
            code: 'not_authenticated',
            detail: 'Authentication credentials were not provided.',
            attr: null,
          },
        });
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
  });

  it('answers 401 to a malformed or revoked key and to a project secret key, on every route', async () => {
    for (const route of routes.filter((entry) => entry.rule?.scope !== 'public')) {
      for (const caller of [callers.malformed, callers.revoked, callers.projectSecretKey]) {
        const response = await call(caller, route);
        expect({
          route: `${route.method} ${route.path}`,
          status: response.status,
          code: response.body.code,
        }).toEqual({
          route: `${route.method} ${route.path}`,
          status: 401,
          code: 'authentication_failed',
        });
        expectNoLeak(response, { organizationIdIsSecret: true });
      }
    }
  });

  it('answers 403 naming the scope to a key without it, on every route', async () => {
    for (const route of routes.filter((entry) => entry.rule?.scope !== 'public')) {
      const response = await call(callers.unrelatedScope, route);
      expect({
        route: `${route.method} ${route.path}`,
        status: response.status,
        detail: response.body.detail,
      }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
        detail: `API key missing required scope '${route.rule!.scope}'`,
      });
      expectNoLeak(response, { organizationIdIsSecret: true });
    }
  });

  it('answers 403 to a key scoped to another organization, on every organization or project route', async () => {
    for (const route of routes.filter(scoped)) {
      const response = await call(callers.otherOrganizationKey, route);
      expect({
        route: `${route.method} ${route.path}`,
        status: response.status,
        code: response.body.code,
      }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
        code: 'permission_denied',
      });
      expectNoLeak(response, { organizationIdIsSecret: false });
    }
  });

  it('answers a non-member exactly as for an id that does not exist, on every organization or project route', async () => {
    for (const route of routes.filter(scoped)) {
      const response = await call(callers.outsider, route);
      const unknownPath = concretePath(route)
        .replace(target.organizationId, randomUUID())
        .replace(`/api/projects/${target.projectId}/`, '/api/projects/999999/')
        .replace(`/api/environments/${target.projectId}/`, '/api/environments/999999/');
      const unknown = await callers.outsider.request(route.method, unknownPath, {
        body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      });
      expect({
        route: `${route.method} ${route.path}`,
        status: response.status,
        body: response.body,
      }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 404,
        body: unknown.body,
      });
      expect(unknown.status).toBe(404);
      expectNoLeak(response, { organizationIdIsSecret: true });
    }
  });

  it('answers 403 to a member below the level a route needs', async () => {
    const leveled = routes.filter(
      (route) => scoped(route) && (route.rule?.level ?? MembershipLevel.Member) > MembershipLevel.Member,
    );
    expect(leveled.length).toBeGreaterThan(5);
    for (const route of leveled) {
      const response = await call(callers.member, route);
      expect({
        route: `${route.method} ${route.path}`,
        status: response.status,
        detail: response.body.detail,
      }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
        detail: 'Your organization access level is insufficient.',
      });
    }
  });

  it("never lists the target organization's resources to an outsider on routes without an organization", async () => {
    const unscopedReads = routes.filter(
      (route) => route.method === 'GET' && !scoped(route) && route.rule?.scope !== 'public',
    );
    expect(unscopedReads.length).toBeGreaterThanOrEqual(2);
    for (const route of unscopedReads) {
      const response = await call(callers.outsider, route);
      expect(response.status).toBe(200);
      expectNoLeak(response, { organizationIdIsSecret: true });
    }
  });

  it('left every resource of the target organization as it was', async () => {
    const owner = callers.owner;
    const organization = await owner.get(`/api/organizations/${target.organizationId}/`);
    expect(organization.body.name).toBe('Target organization');
    expect((await owner.get(`/api/projects/${target.projectId}/`)).body.api_token).toBe(target.projectApiKey);
    const invites = await owner.get(`/api/organizations/${target.organizationId}/invites/`);
    expect(invites.body.results.map((invite: { id: string }) => invite.id)).toEqual([target.inviteId]);
    expect(
      (await owner.get(`/api/organizations/${target.organizationId}/domains/${target.domainId}/`)).status,
    ).toBe(200);
    const members = await owner.get(
      `/api/organizations/${target.organizationId}/members/?email=${target.memberEmail}`,
    );
    expect(members.body.results.map((member: { level: number }) => member.level)).toEqual([
      MembershipLevel.Member,
    ]);
  });
});
