import { randomBytes } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  createTestClickHouse,
  testClickHouseDataPath,
  type TestClickHouse,
} from '@hogbase/clickhouse/testing';
import { loadManagementConfig, type ManagementConfig } from '@hogbase/config';
import { BootstrapService, createManagementApp, projectPathOf, routeTable } from '@hogbase/management-api';
import {
  BatchExportRun,
  MembershipLevel,
  OrganizationMembership,
  startEmbeddedPostgres,
  User,
  type EmbeddedPostgres,
} from '@hogbase/postgres';
import {
  createTestDatabase,
  startDnsTestServer,
  type DnsTestServer,
  type TestDatabase,
  withDeadline,
} from '@hogbase/test-support';
import { apiClient, type ApiClient, type ApiResponse } from './management-test-app';

/**
 * Every write route, as an owner, an admin and a member, on the embedded Postgres (PGlite behind a
 * socket server that serves one transaction at a time) and on the machine's PostgreSQL. Which status
 * each role gets is other tests' business; here every request must answer, and not with a 5xx,
 * within a deadline. A route that queries on a second connection while its transaction is open
 * used to hang the embedded engine, and with it every database-backed endpoint of the instance.
 */

const POOL_SIZE = 10;

type Role = 'owner' | 'admin' | 'member';
const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

/** What one request needs: a fresh organization with something of each kind in it. */
interface World {
  organizationId: string;
  projectId: number;
  /** Created by the owner; the member's view-only role was given access to it. */
  flagId: number;
  /** A person-property cohort of the project, named by the PATCHed filters. */
  cohortId: number;
  /** "can only view" flags; the member and the target belong to it. */
  viewerRoleId: string;
  /** A second role, with no access to the flag yet. */
  editorRoleId: string;
  /** The target's membership of the viewer role. */
  roleMembershipId: string;
  /** The viewer role's access to the flag. */
  roleAccessId: number;
  /** Sent by the owner. */
  inviteId: string;
  domainId: string;
  /** A batch export of the project (NoOp destination), and a run of it. */
  batchExportId: string;
  runId: string;
  /** A fourth member, whom member routes act on. */
  targetUuid: string;
  adminUuid: string;
  /** Source apps of the organization: a destination (with a config in the project), a frontend app, an import app, a transformation. */
  destinationId: number;
  frontendAppId: number;
  importAppId: number;
  transformationId: number;
  pluginConfigId: number;
  /** A project secret API key of the project. */
  secretKeyId: string;
}

interface RouteCall {
  path: string;
  body?: unknown;
}

const fresh = () => randomUUID().slice(0, 8);
const organization = (world: World) => `/api/organizations/${world.organizationId}`;
const flags = (world: World) => `/api/projects/${world.projectId}/feature_flags`;
const secretKeys = (world: World) => `/api/projects/${world.projectId}/project_secret_api_keys`;
const READ_FLAGS = ['feature_flag:read'];
const BACKFILL_RANGE = { start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-01T03:00:00Z' };
const NOOP_EXPORT = { name: 'No-op', interval: 'hour', destination: { type: 'NoOp', config: {} } };
const SOURCE_APP = { plugin_type: 'source', name: 'Edited here' };
const DESTINATION_SOURCE = {
  'plugin.json': JSON.stringify({ name: 'Edited', config: [{ key: 'url', type: 'string' }] }),
  'index.js': 'exports.onEvent = async function () {};',
};

/** The write routes of one pipeline-app collection (import apps have no actions). */
function pipelineAppRoutes(
  collection:
    'pipeline_transformations' | 'pipeline_destinations' | 'pipeline_frontend_apps' | 'pipeline_import_apps',
  idOf: (world: World) => number,
): Record<string, (world: World) => RouteCall> {
  const prefix = `/api/organizations/:organization_id/${collection}`;
  const path = (world: World, suffix = '') => `${organization(world)}/${collection}/${suffix}`;
  const routes: Record<string, (world: World) => RouteCall> = {
    [`POST ${prefix}`]: (world) => ({ path: path(world), body: SOURCE_APP }),
    [`PATCH ${prefix}/:id`]: (world) => ({ path: path(world, `${idOf(world)}/`), body: { name: 'Renamed' } }),
    [`DELETE ${prefix}/:id`]: (world) => ({ path: path(world, `${idOf(world)}/`) }),
  };
  if (collection !== 'pipeline_import_apps') {
    routes[`PATCH ${prefix}/:id/update_source`] = (world) => ({
      path: path(world, `${idOf(world)}/update_source/`),
      body: DESTINATION_SOURCE,
    });
    routes[`POST ${prefix}/:id/upgrade`] = (world) => ({
      path: path(world, `${idOf(world)}/upgrade/`),
      body: {},
    });
  }
  return routes;
}

/** One call per write route of the route table, keyed `METHOD path`. */
const WRITE_ROUTES: Record<string, (world: World) => RouteCall> = {
  'POST /api/organizations/:organization_id/batch_exports/:id/backfill': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/backfill/`,
    body: BACKFILL_RANGE,
  }),
  'POST /api/organizations/:organization_id/batch_exports/:id/backfills': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/backfills/`,
    body: BACKFILL_RANGE,
  }),
  'POST /api/organizations/:organization_id/batch_exports/:id/runs/:run_id/retry': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/runs/${world.runId}/retry/`,
  }),
  'POST /api/organizations/:organization_id/batch_exports/:id/runs/:run_id/cancel': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/runs/${world.runId}/cancel/`,
  }),
  'POST /api/projects/:project_id/batch_exports/:id/backfill': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/backfill/`,
    body: BACKFILL_RANGE,
  }),
  'POST /api/projects/:project_id/batch_exports/:id/backfills': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/backfills/`,
    body: BACKFILL_RANGE,
  }),
  'POST /api/projects/:project_id/batch_exports/:id/runs/:run_id/retry': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/runs/${world.runId}/retry/`,
  }),
  'POST /api/projects/:project_id/batch_exports/:id/runs/:run_id/cancel': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/runs/${world.runId}/cancel/`,
  }),
  'POST /api/organizations/:organization_id/batch_exports': (world) => ({
    path: `${organization(world)}/batch_exports/`,
    body: NOOP_EXPORT,
  }),
  'PATCH /api/organizations/:organization_id/batch_exports/:id': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/`,
    body: { name: 'Renamed', paused: true },
  }),
  'DELETE /api/organizations/:organization_id/batch_exports/:id': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/`,
  }),
  'POST /api/organizations/:organization_id/batch_exports/:id/pause': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/pause/`,
  }),
  'POST /api/organizations/:organization_id/batch_exports/:id/unpause': (world) => ({
    path: `${organization(world)}/batch_exports/${world.batchExportId}/unpause/`,
    body: { backfill: true },
  }),
  'POST /api/projects/:project_id/batch_exports': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/`,
    body: NOOP_EXPORT,
  }),
  'PATCH /api/projects/:project_id/batch_exports/:id': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/`,
    body: { name: 'Renamed', paused: true },
  }),
  'DELETE /api/projects/:project_id/batch_exports/:id': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/`,
  }),
  'POST /api/projects/:project_id/batch_exports/:id/pause': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/pause/`,
  }),
  'POST /api/projects/:project_id/batch_exports/:id/unpause': (world) => ({
    path: `/api/projects/${world.projectId}/batch_exports/${world.batchExportId}/unpause/`,
    body: { backfill: true },
  }),
  'POST /api/organizations': () => ({ path: '/api/organizations/', body: { name: `Created ${fresh()}` } }),
  'DELETE /api/organizations/:id': (world) => ({ path: `${organization(world)}/` }),
  'PATCH /api/organizations/:id': (world) => ({ path: `${organization(world)}/`, body: { name: 'Renamed' } }),
  'POST /api/organizations/:organization_id/domains': (world) => ({
    path: `${organization(world)}/domains/`,
    body: { domain: `created-${fresh()}.example.com` },
  }),
  'DELETE /api/organizations/:organization_id/domains/:id': (world) => ({
    path: `${organization(world)}/domains/${world.domainId}/`,
  }),
  'PATCH /api/organizations/:organization_id/domains/:id': (world) => ({
    path: `${organization(world)}/domains/${world.domainId}/`,
    body: { jit_provisioning_enabled: false },
  }),
  'POST /api/organizations/:organization_id/domains/:id/verify': (world) => ({
    path: `${organization(world)}/domains/${world.domainId}/verify/`,
  }),
  'POST /api/organizations/:organization_id/invites': (world) => ({
    path: `${organization(world)}/invites/`,
    body: { target_email: `invitee-${fresh()}@write-routes.test`, send_email: false },
  }),
  'DELETE /api/organizations/:organization_id/invites/:id': (world) => ({
    path: `${organization(world)}/invites/${world.inviteId}/`,
  }),
  'POST /api/organizations/:organization_id/invites/bulk': (world) => ({
    path: `${organization(world)}/invites/bulk/`,
    body: [{ target_email: `bulk-${fresh()}@write-routes.test`, send_email: false }],
  }),
  'DELETE /api/organizations/:organization_id/members/:user__uuid': (world) => ({
    path: `${organization(world)}/members/${world.targetUuid}/`,
  }),
  'PATCH /api/organizations/:organization_id/members/:user__uuid': (world) => ({
    path: `${organization(world)}/members/${world.targetUuid}/`,
    body: { level: MembershipLevel.Admin },
  }),
  'POST /api/organizations/:organization_id/projects': (world) => ({
    path: `${organization(world)}/projects/`,
    body: { name: 'Another project' },
  }),
  'POST /api/organizations/:organization_id/roles': (world) => ({
    path: `${organization(world)}/roles/`,
    body: { name: `Role ${fresh()}` },
  }),
  'DELETE /api/organizations/:organization_id/roles/:id': (world) => ({
    path: `${organization(world)}/roles/${world.viewerRoleId}/`,
  }),
  'PATCH /api/organizations/:organization_id/roles/:id': (world) => ({
    path: `${organization(world)}/roles/${world.viewerRoleId}/`,
    body: { name: 'Renamed role', feature_flags_access_level: 37 },
  }),
  'POST /api/organizations/:organization_id/roles/:role_id/role_memberships': (world) => ({
    path: `${organization(world)}/roles/${world.viewerRoleId}/role_memberships/`,
    body: { user_uuid: world.adminUuid },
  }),
  'DELETE /api/organizations/:organization_id/roles/:role_id/role_memberships/:id': (world) => ({
    path: `${organization(world)}/roles/${world.viewerRoleId}/role_memberships/${world.roleMembershipId}/`,
  }),
  'POST /api/projects': () => ({ path: '/api/projects/', body: { name: 'Current organization project' } }),
  'DELETE /api/projects/:id': (world) => ({ path: `/api/projects/${world.projectId}/` }),
  'PATCH /api/projects/:id': (world) => ({
    path: `/api/projects/${world.projectId}/`,
    body: { name: 'Renamed' },
  }),
  'PATCH /api/projects/:id/reset_token': (world) => ({
    path: `/api/projects/${world.projectId}/reset_token/`,
  }),
  'POST /api/projects/:project_id/feature_flags': (world) => ({
    path: `${flags(world)}/`,
    body: {
      key: `created-${fresh()}`,
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: world.cohortId }] }] },
    },
  }),
  'POST /api/projects/:project_id/feature_flags/:feature_flag_id/role_access': (world) => ({
    path: `${flags(world)}/${world.flagId}/role_access/`,
    body: { role_id: world.editorRoleId },
  }),
  'DELETE /api/projects/:project_id/feature_flags/:feature_flag_id/role_access/:id': (world) => ({
    path: `${flags(world)}/${world.flagId}/role_access/${world.roleAccessId}/`,
  }),
  'DELETE /api/projects/:project_id/feature_flags/:id': (world) => ({
    path: `${flags(world)}/${world.flagId}/`,
  }),
  // The finding's request: a name only. The member edits through its role's access to the flag,
  // which is read inside the update's transaction.
  'PATCH /api/projects/:project_id/feature_flags/:id': (world) => ({
    path: `${flags(world)}/${world.flagId}/`,
    body: { name: 'Renamed' },
  }),
  'POST /api/projects/:project_id/feature_flags/:id/create_static_cohort_for_flag': (world) => ({
    path: `${flags(world)}/${world.flagId}/create_static_cohort_for_flag/`,
  }),
  'POST /api/projects/:project_id/feature_flags/:id/dashboard': (world) => ({
    path: `${flags(world)}/${world.flagId}/dashboard/`,
  }),
  'POST /api/projects/:project_id/feature_flags/:id/enrich_usage_dashboard': (world) => ({
    path: `${flags(world)}/${world.flagId}/enrich_usage_dashboard/`,
  }),
  'POST /api/projects/:project_id/feature_flags/user_blast_radius': (world) => ({
    path: `${flags(world)}/user_blast_radius/`,
    body: { condition: { properties: [], rollout_percentage: 50 } },
  }),
  ...pipelineAppRoutes('pipeline_destinations', (world) => world.destinationId),
  ...pipelineAppRoutes('pipeline_frontend_apps', (world) => world.frontendAppId),
  ...pipelineAppRoutes('pipeline_import_apps', (world) => world.importAppId),
  ...pipelineAppRoutes('pipeline_transformations', (world) => world.transformationId),
  'POST /api/projects/:project_id/project_secret_api_keys': (world) => ({
    path: `${secretKeys(world)}/`,
    body: { label: `Created ${fresh()}`, scopes: READ_FLAGS },
  }),
  'PATCH /api/projects/:project_id/project_secret_api_keys/:id': (world) => ({
    path: `${secretKeys(world)}/${world.secretKeyId}/`,
    body: { label: 'Renamed' },
  }),
  'PUT /api/projects/:project_id/project_secret_api_keys/:id': (world) => ({
    path: `${secretKeys(world)}/${world.secretKeyId}/`,
    body: { label: 'Replaced', scopes: READ_FLAGS },
  }),
  'POST /api/projects/:project_id/project_secret_api_keys/:id/roll': (world) => ({
    path: `${secretKeys(world)}/${world.secretKeyId}/roll/`,
  }),
  'DELETE /api/projects/:project_id/project_secret_api_keys/:id': (world) => ({
    path: `${secretKeys(world)}/${world.secretKeyId}/`,
  }),
  'POST /api/projects/:project_id/query': (world) => ({
    path: `/api/projects/${world.projectId}/query/`,
    body: { query: { kind: 'HogQLQuery', query: 'select count() from events' } },
  }),
  // An id no query has: the route must still answer (404), not hang.
  'DELETE /api/projects/:project_id/query/:id': (world) => ({
    path: `/api/projects/${world.projectId}/query/${randomUUID()}/`,
  }),
  'POST /api/projects/:project_id/plugin_configs': (world) => ({
    path: `/api/projects/${world.projectId}/plugin_configs/`,
    body: { plugin: world.frontendAppId, enabled: true, config: {} },
  }),
  'PATCH /api/projects/:project_id/plugin_configs/:id': (world) => ({
    path: `/api/projects/${world.projectId}/plugin_configs/${world.pluginConfigId}/`,
    body: { enabled: true, config: { url: 'https://hooks.example.com' } },
  }),
  'DELETE /api/projects/:project_id/plugin_configs/:id': (world) => ({
    path: `/api/projects/${world.projectId}/plugin_configs/${world.pluginConfigId}/`,
  }),
  'POST /api/projects/:project_id/plugin_configs/:id/upgrade': (world) => ({
    path: `/api/projects/${world.projectId}/plugin_configs/${world.pluginConfigId}/upgrade/`,
    body: {},
  }),
};

/** More calls on routes whose transaction reads more with another body. */
const EXTRA_CALLS: Record<string, (world: World) => RouteCall> = {
  'PATCH /api/projects/:project_id/feature_flags/:id (filters naming a cohort)': (world) => ({
    path: `${flags(world)}/${world.flagId}/`,
    body: {
      filters: {
        groups: [
          { properties: [{ key: 'id', type: 'cohort', value: world.cohortId }], rollout_percentage: 50 },
        ],
      },
    },
  }),
};

const CALLS = { ...WRITE_ROUTES, ...EXTRA_CALLS };

/** An /api/environments/ route runs the handler of its /api/projects/ twin: the twin's call covers it. */
function writeRoutesOf(app: INestApplication): string[] {
  const routes = routeTable(app)
    .filter((route) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(route.method))
    .map((route) => `${route.method} ${projectPathOf(route.path)}`);
  return [...new Set(routes)].sort();
}

interface Engine {
  url: string;
  stop(): Promise<void>;
}

async function embeddedEngine(): Promise<Engine> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-write-routes-'));
  let embedded: EmbeddedPostgres;
  try {
    embedded = await startEmbeddedPostgres(dataDir, { maxConnections: POOL_SIZE + 2 });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: embedded.url,
    async stop() {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function machineEngine(): Promise<Engine> {
  const database: TestDatabase = await createTestDatabase();
  return { url: database.url, stop: () => database.drop() };
}

const ENGINES: [string, () => Promise<Engine>][] = [
  ['the embedded Postgres', embeddedEngine],
  ["the machine's PostgreSQL", machineEngine],
];

describe.each(ENGINES)('every write route on %s', (_name, startEngine) => {
  let engine: Engine | undefined;
  let clickhouse: TestClickHouse | undefined;
  let dns: DnsTestServer | undefined;
  let app: INestApplication | undefined;
  let dataSource: DataSource;
  let baseUrl: string;
  const users = {} as Record<Role | 'target', { user: User; api: ApiClient }>;
  /** Set when a request hung: the engine may be stuck, so the routes after it fail at once. */
  let hung: string | undefined;

  beforeAll(async () => {
    engine = await startEngine();
    clickhouse = await createTestClickHouse();
    dns = await startDnsTestServer();
    const config: ManagementConfig = {
      ...loadManagementConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/tmp/hogbase-test-unused' }),
      // A key of the test's own: nothing is written under DATA_DIR.
      encryptionKeys: [randomBytes(32)],
      dnsServers: [dns.address],
    };
    config.database = { ...config.database, poolSize: POOL_SIZE };
    app = await createManagementApp({
      config,
      databaseUrl: engine.url,
      clickhouse: { database: clickhouse.database, dataPath: testClickHouseDataPath() },
      logger: pino({ level: 'silent' }),
    });
    await app.listen(0, '127.0.0.1');
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    dataSource = app.get(DataSource);
    const bootstrap = app.get(BootstrapService);
    for (const role of [...ROLES, 'target'] as const) {
      const email = `${role}-${fresh()}@write-routes.test`;
      const user = await bootstrap.findOrCreateUser(email);
      const key = await bootstrap.createPersonalApiKey({ email, scopes: ['*'] });
      users[role] = { user, api: apiClient(baseUrl, `Bearer ${key}`) };
    }
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await engine?.stop();
    await clickhouse?.drop();
    await dns?.stop();
  });

  /** A request the world is built with: it must succeed, or the test is not testing anything. */
  async function setUp<T = any>(call: Promise<ApiResponse<T>>, what: string): Promise<T> {
    const response = await withDeadline(call, `setting up ${what}`);
    if (response.status >= 300) {
      throw new Error(`setting up ${what}: ${response.status} ${JSON.stringify(response.body)}`);
    }
    return response.body;
  }

  async function newWorld(): Promise<World> {
    const owner = users.owner;
    const created: { id: string } = await setUp(
      owner.api.post('/api/organizations/', { name: `World ${fresh()}` }),
      'an organization',
    );
    const [team] = await dataSource.query<{ id: number }[]>(
      'SELECT id FROM teams WHERE organization_id = $1',
      [created.id],
    );
    const levels = {
      admin: MembershipLevel.Admin,
      member: MembershipLevel.Member,
      target: MembershipLevel.Member,
    };
    await dataSource.getRepository(OrganizationMembership).insert(
      (['admin', 'member', 'target'] as const).map((role) => ({
        id: uuidv7(),
        organizationId: created.id,
        userId: users[role].user.id,
        level: levels[role],
      })),
    );
    // `POST /api/projects/` acts on the caller's current organization.
    await dataSource.getRepository(User).update(
      Object.values(users).map(({ user }) => user.id),
      { currentOrganizationId: created.id, currentTeamId: team.id },
    );
    const world = { organizationId: created.id, projectId: team.id } as World;
    const [cohort] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO cohorts (team_id, name, filters) VALUES ($1, 'Pros', $2) RETURNING id`,
      [team.id, { properties: { type: 'AND', values: [{ type: 'person', key: 'plan', value: 'pro' }] } }],
    );
    world.cohortId = cohort.id;
    const api = owner.api;
    world.flagId = (await setUp(api.post(`${flags(world)}/`, { key: `flag-${fresh()}` }), 'a flag')).id;
    const roles = `${organization(world)}/roles/`;
    world.viewerRoleId = (
      await setUp(api.post(roles, { name: 'Viewers', feature_flags_access_level: 21 }), 'a view-only role')
    ).id;
    world.editorRoleId = (await setUp(api.post(roles, { name: 'Editors' }), 'a second role')).id;
    await setUp(
      api.post(`${roles}${world.viewerRoleId}/role_memberships/`, { user_uuid: users.member.user.uuid }),
      "the member's role membership",
    );
    world.roleMembershipId = (
      await setUp(
        api.post(`${roles}${world.viewerRoleId}/role_memberships/`, { user_uuid: users.target.user.uuid }),
        "the target's role membership",
      )
    ).id;
    world.roleAccessId = (
      await setUp(
        api.post(`${flags(world)}/${world.flagId}/role_access/`, { role_id: world.viewerRoleId }),
        "the viewers' access to the flag",
      )
    ).id;
    world.inviteId = (
      await setUp(
        api.post(`${organization(world)}/invites/`, {
          target_email: `pending-${fresh()}@write-routes.test`,
          send_email: false,
        }),
        'an invite',
      )
    ).id;
    world.domainId = (
      await setUp(
        api.post(`${organization(world)}/domains/`, { domain: `d-${fresh()}.example.com` }),
        'a domain',
      )
    ).id;
    world.batchExportId = (
      await setUp(api.post(`${organization(world)}/batch_exports/`, NOOP_EXPORT), 'a batch export')
    ).id;
    world.runId = randomUUID();
    await dataSource.getRepository(BatchExportRun).insert({
      id: world.runId,
      batchExportId: world.batchExportId,
      dataIntervalStart: new Date('2026-01-01T00:00:00Z'),
      dataIntervalEnd: new Date('2026-01-01T01:00:00Z'),
    });
    const apps = await dataSource.query<{ id: number }[]>(
      `INSERT INTO plugins (organization_id, plugin_type, name, config_schema, capabilities) VALUES
       ($1, 'source', 'Destination', '[{"key": "url", "type": "string"}]', '{"methods": ["onEvent"], "jobs": [], "scheduled_tasks": []}'),
       ($1, 'source', 'Frontend app', '[]', '{}'),
       ($1, 'source', 'Import app', '[]', '{"methods": [], "jobs": [], "scheduled_tasks": ["runEveryHour"]}'),
       ($1, 'source', 'Transformation', '[]', '{"methods": ["processEvent"], "jobs": [], "scheduled_tasks": []}')
       RETURNING id`,
      [created.id],
    );
    [world.destinationId, world.frontendAppId, world.importAppId, world.transformationId] = apps.map(
      (app) => app.id,
    );
    const [pluginConfig] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO plugin_configs (plugin_id, team_id, web_token) VALUES ($1, $2, $3) RETURNING id`,
      [world.destinationId, team.id, randomBytes(24).toString('base64url')],
    );
    world.pluginConfigId = pluginConfig.id;
    world.secretKeyId = (
      await setUp(api.post(`${secretKeys(world)}/`, { label: 'Backend', scopes: READ_FLAGS }), 'a secret key')
    ).id;
    world.targetUuid = users.target.user.uuid;
    world.adminUuid = users.admin.user.uuid;
    return world;
  }

  it('has a call for every write route of the route table', () => {
    expect(Object.keys(WRITE_ROUTES).sort()).toEqual(writeRoutesOf(app!));
  });

  it.each(Object.keys(CALLS))('%s answers an owner, an admin and a member', async (route) => {
    if (hung) throw new Error(`not run: the engine may be stuck since ${hung} hung`);
    const method = route.split(' ')[0];
    const failures: string[] = [];
    for (const role of ROLES) {
      const world = await newWorld();
      const { path: target, body } = CALLS[route](world);
      let response: ApiResponse;
      try {
        response = await withDeadline(
          users[role].api.request(method, target, body === undefined ? {} : { body }),
          `${role}: ${route}`,
        );
      } catch (error) {
        hung = `${role}: ${route}`;
        throw error;
      }
      if (response.status >= 500) {
        failures.push(`${role}: ${response.status} ${JSON.stringify(response.body)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('still answers /_ready, the current user and a read of flags afterwards', async () => {
    if (hung) throw new Error(`not run: the engine may be stuck since ${hung} hung`);
    const world = await newWorld();
    const anonymous = apiClient(baseUrl);
    const answers = await Promise.all([
      withDeadline(anonymous.get('/_ready'), '/_ready'),
      withDeadline(users.member.api.get('/api/users/@me/'), '/api/users/@me/'),
      withDeadline(users.member.api.get(`${flags(world)}/`), 'the flag list'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
  });
});
