import { randomUUID } from 'node:crypto';
import { insertEvents } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { accessRuleForPath, projectPathOf, routeTable, type RouteEntry } from '@hogbase/management-api';
import { MembershipLevel } from '@hogbase/postgres';
import { ApiClient, ManagementTestApp, startManagementTestApp, TestUser } from './management-test-app';

/**
 * PostHog serves every project-scoped route under `/api/environments/:environment_id/` as well as
 * `/api/projects/:project_id/`, and `/api/environments/` is the project collection itself; newer
 * clients (PostHog's CLI) call only the environment paths. Here a project is its own environment:
 * both prefixes name the same row, with the same access rules.
 */
describe('/api/environments/', () => {
  let clickhouse: TestClickHouse;
  let testApp: ManagementTestApp;
  let owner: TestUser & { organizationId: string; projectId: number; projectApiKey: string };
  let stranger: TestUser & { organizationId: string; projectId: number };
  let api: ApiClient;
  let projectId: number;
  let secondProjectId: number;

  const environment = (suffix = '', id: number | string = projectId) => `/api/environments/${id}/${suffix}`;
  const project = (suffix = '', id: number | string = projectId) => `/api/projects/${id}/${suffix}`;

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    owner = await testApp.createOwner('owner@environments.test', 'Environments organization');
    stranger = await testApp.createOwner('stranger@elsewhere.test', 'Another organization');
    ({ api, projectId } = owner);
    const second = await api.post(`/api/organizations/${owner.organizationId}/projects/`, { name: 'Second' });
    expect(second.status).toBe(201);
    secondProjectId = second.body.id;
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  describe('the route table', () => {
    let routes: RouteEntry[];
    const name = (route: RouteEntry) => `${route.method} ${route.path}`;
    const projectRoutes = () => routes.filter((route) => /^\/api\/projects(\/|$)/.test(route.path));
    const environmentRoutes = () => routes.filter((route) => /^\/api\/environments(\/|$)/.test(route.path));

    beforeAll(() => {
      routes = routeTable(testApp.app);
    });

    it('has an /api/environments/ twin of every /api/projects/ route, same handler and access rule, and no other', () => {
      const twins = new Map(
        environmentRoutes().map((route) => [`${route.method} ${projectPathOf(route.path)}`, route]),
      );
      expect(projectRoutes().length).toBeGreaterThan(40);
      const mismatches = projectRoutes().flatMap((route) => {
        const twin = twins.get(name(route));
        twins.delete(name(route));
        if (!twin) return [`${name(route)}: no twin`];
        const expected = { handler: route.handler, rule: accessRuleForPath(route.rule!, twin.path) };
        const actual = { handler: twin.handler, rule: twin.rule };
        return JSON.stringify(actual) === JSON.stringify(expected)
          ? []
          : [`${name(twin)}: ${JSON.stringify(actual)}`];
      });
      expect(mismatches).toEqual([]);
      expect([...twins.values()].map(name)).toEqual([]);
    });

    it('names the project environment_id under /api/environments/, as PostHog does, and resolves it for the guard', () => {
      const nested = environmentRoutes().filter((route) =>
        route.path.startsWith('/api/environments/:environment_id/'),
      );
      expect(nested.length).toBeGreaterThan(40);
      for (const route of nested) {
        expect({ route: name(route), projectParam: route.rule?.projectParam }).toEqual({
          route: name(route),
          projectParam: 'environment_id',
        });
      }
      expect(
        environmentRoutes()
          .filter((route) => !route.path.startsWith('/api/environments/:environment_id/'))
          .map(name),
      ).toEqual([
        'GET /api/environments',
        'POST /api/environments',
        'DELETE /api/environments/:id',
        'GET /api/environments/:id',
        'PATCH /api/environments/:id',
        'PATCH /api/environments/:id/reset_token',
      ]);
    });

    it('documents every environment route in the OpenAPI document, with its path parameters and its own operationId', async () => {
      const { body: document } = await testApp.client().get('/api/schema/');
      const operationIds: string[] = [];
      for (const operations of Object.values<Record<string, { operationId: string }>>(document.paths)) {
        operationIds.push(...Object.values(operations).map((operation) => operation.operationId));
      }
      expect(operationIds.filter((id, index) => operationIds.indexOf(id) !== index)).toEqual([]);
      for (const route of environmentRoutes()) {
        const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
        const operation = document.paths[openApiPath]?.[route.method.toLowerCase()];
        const twin = document.paths[projectPathOf(openApiPath)]?.[route.method.toLowerCase()];
        const templateNames = [...openApiPath.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
        const pathParameters = (operation?.parameters ?? [])
          .filter((parameter: { in: string }) => parameter.in === 'path')
          .map((parameter: { name: string }) => parameter.name)
          .sort();
        expect({
          route: name(route),
          pathParameters,
          security: operation?.security,
          access: operation?.['x-access'],
          sameTagsAsProjects: JSON.stringify(operation?.tags) === JSON.stringify(twin?.tags),
          ownOperationId: Boolean(operation?.operationId) && operation?.operationId !== twin?.operationId,
        }).toEqual({
          route: name(route),
          pathParameters: templateNames,
          security: [{ PersonalAPIKey: [route.rule!.scope] }],
          access: route.rule,
          sameTagsAsProjects: true,
          ownOperationId: true,
        });
      }
    });

    it('answers 405 with Allow on an environment path asked with another method', async () => {
      const response = await api.request('PUT', environment('feature_flags/'), { body: {} });
      expect([response.status, response.body.code]).toEqual([405, 'method_not_allowed']);
      expect(response.headers.get('allow')).toBe('GET, POST');
      const root = await api.request('PUT', environment(), { body: {} });
      expect([root.status, root.headers.get('allow')]).toEqual([405, 'DELETE, GET, PATCH']);
    });
  });

  describe('a project as an environment', () => {
    it('lists the same projects under /api/environments/ as under /api/projects/', async () => {
      const [environments, projects] = await Promise.all([
        api.get('/api/environments/'),
        api.get('/api/projects/'),
      ]);
      expect(environments.status).toBe(200);
      expect(environments.body.results.map((row: { id: number }) => row.id).sort()).toEqual(
        [projectId, secondProjectId].sort(),
      );
      expect(environments.body.results).toEqual(projects.body.results);
      expect(environments.body.count).toBe(2);
    });

    it('retrieves a project by id and @current, updates it and resets its token as an environment', async () => {
      const retrieved = await api.get(environment());
      expect(retrieved.status).toBe(200);
      expect(retrieved.body).toEqual((await api.get(project())).body);
      expect(retrieved.body.api_token).toBe(owner.projectApiKey);
      expect((await api.get(environment('', '@current'))).body.id).toBe(projectId);

      const renamed = await api.patch(environment(), { name: 'Production' });
      expect([renamed.status, renamed.body.name]).toEqual([200, 'Production']);
      expect((await api.get(project())).body.name).toBe('Production');

      const reset = await api.patch(environment('reset_token/'));
      expect(reset.status).toBe(200);
      expect(reset.body.api_token).not.toBe(owner.projectApiKey);
      expect((await api.get(project())).body.api_token).toBe(reset.body.api_token);
    });

    it('creates and deletes a project through /api/environments/', async () => {
      const created = await api.post('/api/environments/', { name: 'Staging' });
      expect([created.status, created.body.name]).toEqual([201, 'Staging']);
      expect((await api.get(project('', created.body.id))).body.name).toBe('Staging');
      expect((await api.delete(environment('', created.body.id))).status).toBe(204);
      expect((await api.get(project('', created.body.id))).status).toBe(404);
    });
  });

  describe('project-scoped resources under /api/environments/:environment_id/', () => {
    it('creates, lists, updates and reads feature flags, the same flags as under /api/projects/', async () => {
      const created = await api.post(environment('feature_flags/'), {
        key: 'environment-flag',
        filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
      });
      expect(created.status).toBe(201);
      const listed = await api.get(environment('feature_flags/'));
      expect(listed.body.results.map((flag: { key: string }) => flag.key)).toEqual(['environment-flag']);
      expect((await api.get(project('feature_flags/'))).body.results).toEqual(listed.body.results);
      const updated = await api.patch(environment(`feature_flags/${created.body.id}/`), { active: false });
      expect([updated.status, updated.body.active]).toEqual([200, false]);
      const viaProject = await api.get(project(`feature_flags/${created.body.id}/`));
      expect(viaProject.body.active).toBe(false);
      expect((await api.get(environment(`feature_flags/${created.body.id}/`))).body).toEqual(viaProject.body);
      // The flag's second-level routes, named by the environment too.
      const roleAccess = await api.get(environment(`feature_flags/${created.body.id}/role_access/`));
      expect([roleAccess.status, roleAccess.body.count]).toEqual([200, 0]);
      // Not another project's flags: the second project has none.
      expect((await api.get(environment('feature_flags/', secondProjectId))).body.count).toBe(0);
    });

    it('lists the events of the project, with a next link under the same prefix', async () => {
      const uuids = [randomUUID(), randomUUID()];
      await insertEvents(
        clickhouse.client,
        clickhouse.database,
        uuids.map((uuid, index) => ({
          uuid,
          event: '$pageview',
          properties: '{}',
          timestamp: `2025-03-0${index + 1} 10:00:00.000000`,
          team_id: projectId,
          distinct_id: 'visitor',
          created_at: `2025-03-0${index + 1} 10:00:00.000000`,
          person_id: randomUUID(),
        })),
      );
      const page = await api.get(environment('events/?limit=1&after=2025-01-01'));
      expect(page.status).toBe(200);
      expect(page.body.results.map((event: { id: string }) => event.id)).toEqual([uuids[1]]);
      expect(new URL(page.body.next).pathname).toBe(`/api/environments/${projectId}/events/`);
      const one = await api.get(environment(`events/${uuids[0]}/`));
      expect([one.status, one.body.id]).toEqual([200, uuids[0]]);
      expect((await api.get(environment('events/', secondProjectId))).body.results).toEqual([]);
    });

    it('creates, reads, pauses and lists batch exports of the project', async () => {
      const created = await api.post(environment('batch_exports/'), {
        name: 'Environment export',
        interval: 'day',
        destination: { type: 'NoOp', config: {} },
      });
      expect(created.status).toBe(201);
      expect(created.body.team_id).toBe(projectId);
      const paused = await api.post(environment(`batch_exports/${created.body.id}/pause/`));
      expect(paused.status).toBe(200);
      const retrieved = await api.get(environment(`batch_exports/${created.body.id}/`));
      expect([retrieved.status, retrieved.body.paused]).toEqual([200, true]);
      const listed = await api.get(environment('batch_exports/'));
      expect(listed.body.results.map((row: { id: string }) => row.id)).toEqual([created.body.id]);
      expect((await api.get(project('batch_exports/'))).body.results).toEqual(listed.body.results);
      expect((await api.get(environment('batch_exports/', secondProjectId))).body.results).toEqual([]);
    });

    it('configures a pipeline app in the project, in JSON and as a multipart form', async () => {
      const app = await api.post(`/api/organizations/${owner.organizationId}/pipeline_frontend_apps/`, {
        plugin_type: 'source',
        name: 'Webhook',
      });
      expect(app.status).toBe(201);
      const source = await api.patch(
        `/api/organizations/${owner.organizationId}/pipeline_frontend_apps/${app.body.id}/update_source/`,
        {
          'plugin.json': JSON.stringify({
            name: 'Webhook',
            config: [{ key: 'url', name: 'URL', type: 'string' }],
          }),
          'index.ts': 'export function composeWebhook() { return null; }',
        },
      );
      expect(source.status).toBe(200);
      const created = await api.post(environment('plugin_configs/'), {
        plugin: app.body.id,
        enabled: true,
        order: 1,
        config: { url: 'https://hooks.example.com' },
      });
      expect(created.status).toBe(201);
      expect(created.body.team_id).toBe(projectId);
      const form = new FormData();
      form.append('config', JSON.stringify({ url: 'https://hooks.example.com/form' }));
      const patched = await fetch(`${testApp.baseUrl}${environment(`plugin_configs/${created.body.id}/`)}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${owner.key}` },
        body: form,
      });
      expect(patched.status).toBe(200);
      const viaProject = await api.get(project(`plugin_configs/${created.body.id}/`));
      expect(viaProject.body.config).toEqual({ url: 'https://hooks.example.com/form' });
      const listed = await api.get(environment('plugin_configs/'));
      expect(listed.body.results.map((row: { id: number }) => row.id)).toEqual([created.body.id]);
    });

    it('manages project secret API keys', async () => {
      const created = await api.post(environment('project_secret_api_keys/'), {
        label: 'Local evaluation',
        scopes: ['feature_flag:read'],
      });
      expect(created.status).toBe(201);
      const listed = await api.get(project('project_secret_api_keys/'));
      expect(listed.body.results.map((row: { id: string }) => row.id)).toContain(created.body.id);
    });
  });

  describe('access, exactly as under /api/projects/', () => {
    /** The same request under both prefixes: status and body must be equal. */
    async function bothPrefixes(client: ApiClient, method: string, suffix: string, id: number | string) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      const [underProjects, underEnvironments] = await Promise.all([
        client.request(method, project(suffix, id), { body }),
        client.request(method, environment(suffix, id), { body }),
      ]);
      return { underProjects, underEnvironments };
    }

    it("answers another organization's environment exactly as an id that does not exist (404)", async () => {
      for (const suffix of ['', 'feature_flags/', 'events/', 'batch_exports/', 'plugin_configs/']) {
        const foreign = await bothPrefixes(api, 'GET', suffix, stranger.projectId);
        const unknown = await api.get(environment(suffix, 999999));
        expect({
          suffix,
          status: foreign.underEnvironments.status,
          body: foreign.underEnvironments.body,
        }).toEqual({
          suffix,
          status: 404,
          body: unknown.body,
        });
        expect(foreign.underEnvironments.body).toEqual(foreign.underProjects.body);
        expect(JSON.stringify(foreign.underEnvironments.body)).not.toContain(stranger.organizationId);
      }
      expect((await api.get(environment('', 'not-a-number'))).status).toBe(404);
    });

    it('keeps a project-restricted key to its project (403 for the other project of its organization)', async () => {
      const restricted = testApp.client(
        `Bearer ${await testApp.createKey(owner.user.email, ['*'], { projects: [projectId] })}`,
      );
      expect((await restricted.get(environment('feature_flags/'))).status).toBe(200);
      expect((await restricted.get(environment())).status).toBe(200);
      for (const suffix of ['', 'feature_flags/', 'batch_exports/']) {
        const refused = await bothPrefixes(restricted, 'GET', suffix, secondProjectId);
        expect([refused.underEnvironments.status, refused.underEnvironments.body.detail]).toEqual([
          403,
          `API key does not have access to the requested project: ID ${secondProjectId}.`,
        ]);
        expect(refused.underEnvironments.body).toEqual(refused.underProjects.body);
      }
      const environments = await restricted.get('/api/environments/');
      expect(environments.body.results.map((row: { id: number }) => row.id)).toEqual([projectId]);
    });

    it("refuses a key restricted to another organization, and one without the route's scope", async () => {
      const sibling = await api.post('/api/organizations/', { name: 'Sibling organization' });
      expect(sibling.status).toBe(201);
      const elsewhere = testApp.client(
        `Bearer ${await testApp.createKey(owner.user.email, ['*'], { organizations: [sibling.body.id] })}`,
      );
      const outside = await bothPrefixes(elsewhere, 'GET', 'feature_flags/', projectId);
      expect(outside.underEnvironments.status).toBe(403);
      expect(outside.underEnvironments.body).toEqual(outside.underProjects.body);

      const readOnly = testApp.client(
        `Bearer ${await testApp.createKey(owner.user.email, ['feature_flag:read'])}`,
      );
      const write = await bothPrefixes(readOnly, 'POST', 'feature_flags/', projectId);
      expect([write.underEnvironments.status, write.underEnvironments.body.detail]).toEqual([
        403,
        "API key missing required scope 'feature_flag:write'",
      ]);
      expect((await readOnly.get(environment('feature_flags/'))).status).toBe(200);
    });

    it('applies membership levels: a member cannot delete an environment or configure its apps', async () => {
      const member = await testApp.createMember(
        'member@environments.test',
        owner.organizationId,
        MembershipLevel.Member,
      );
      for (const [method, suffix] of [
        ['DELETE', ''],
        ['PATCH', 'reset_token/'],
        ['POST', 'plugin_configs/'],
      ]) {
        const refused = await bothPrefixes(member.api, method, suffix, projectId);
        expect({
          method,
          suffix,
          status: refused.underEnvironments.status,
          detail: refused.underEnvironments.body.detail,
        }).toEqual({
          method,
          suffix,
          status: 403,
          detail: 'Your organization access level is insufficient.',
        });
      }
      expect((await member.api.get(environment('feature_flags/'))).status).toBe(200);
    });

    it('answers 401 without credentials', async () => {
      const response = await testApp.client().get(environment('feature_flags/'));
      expect([response.status, response.body.code]).toEqual([401, 'not_authenticated']);
    });
  });
});
