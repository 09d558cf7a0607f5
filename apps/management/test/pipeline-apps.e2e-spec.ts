import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadManagementConfig } from '@hogbase/config';
import {
  MembershipLevel,
  Organization,
  Plugin,
  PluginConfig,
  PluginSourceFile,
  PluginsAccessLevel,
} from '@hogbase/postgres';
import { startManagementTestApp, type ApiClient, type ManagementTestApp } from './management-test-app';
import { npmTarball, startAppServer, type AppServer } from '@hogbase/test-support';
import { destinationApp } from './destination-app';

const SITE_APP = {
  'plugin.json': JSON.stringify({
    name: 'Banner',
    config: [{ key: 'text', name: 'Text', type: 'string', site: true }],
  }),
  'site.ts':
    'export function inject({ config }: { config: { text: string } }) { document.title = config.text; }',
};

describe('pipeline apps (/api/organizations/:organization_id/pipeline_*/)', () => {
  let testApp: ManagementTestApp;
  let server: AppServer;
  let localApps: string;
  let api: ApiClient;
  let organizationId: string;
  let projectId: number;
  let version = '1.0.0';
  let withOnEvent = false;
  let latest = '1.0.0';

  const registry = () => `${server.url}/registry`;
  const tarballUrl = () => `${registry()}/hog-destination/-/hog-destination-1.0.0.tgz`;
  const destinations = (suffix = '', org = organizationId) =>
    `/api/organizations/${org}/pipeline_destinations/${suffix}`;
  const frontendApps = (suffix = '', org = organizationId) =>
    `/api/organizations/${org}/pipeline_frontend_apps/${suffix}`;
  const importApps = (suffix = '', org = organizationId) =>
    `/api/organizations/${org}/pipeline_import_apps/${suffix}`;
  const transformations = (suffix = '', org = organizationId) =>
    `/api/organizations/${org}/pipeline_transformations/${suffix}`;

  beforeAll(async () => {
    server = await startAppServer();
    server.routes.set('/registry/hog-destination/-/hog-destination-1.0.0.tgz', () => [
      200,
      tarballCache.get(`${version}/${withOnEvent}`) ?? Buffer.alloc(0),
    ]);
    server.routes.set('/registry/hog-destination/latest', () => [
      200,
      JSON.stringify({ name: 'hog-destination', version: latest, dist: { tarball: tarballUrl() } }),
      'application/json',
    ]);
    server.routes.set('/not-an-archive.tgz', () => [200, 'this is not an archive']);
    localApps = await mkdtemp(path.join(tmpdir(), 'hogbase-local-apps-'));
    await mkdir(path.join(localApps, 'banner'));
    for (const [name, content] of Object.entries(SITE_APP))
      await writeFile(path.join(localApps, 'banner', name), content);
    testApp = await startManagementTestApp({
      apps: { localDirectory: localApps, npmRegistryUrl: `${server.url}/registry`, repositoryUrl: undefined },
    });
    ({ api, organizationId, projectId } = await testApp.createOwner(
      'owner@pipeline-apps.test',
      'Apps organization',
    ));
    await cacheTarballs();
  }, 60_000);

  afterAll(async () => {
    await testApp?.close();
    await server?.close();
    if (localApps) await rm(localApps, { recursive: true, force: true });
  });

  const tarballCache = new Map<string, Buffer>();
  async function cacheTarballs() {
    for (const [v, onEvent] of [
      ['1.0.0', false],
      ['1.1.0', true],
    ] as const) {
      tarballCache.set(`${v}/${onEvent}`, await npmTarball(destinationApp(v, { withOnEvent: onEvent })));
    }
  }

  async function setLevel(level: PluginsAccessLevel, org = organizationId) {
    await testApp.dataSource.getRepository(Organization).update({ id: org }, { pluginsAccessLevel: level });
  }

  async function installDestination(client = api, org = organizationId) {
    const response = await client.post(destinations('', org), {
      plugin_type: 'custom',
      url: `${tarballUrl()}?private_token=s3cr3t`,
    });
    expect(response.status).toBe(201);
    return response.body as Record<string, any>;
  }

  describe('a custom app from an npm-style tarball on a loopback server', () => {
    let app: Record<string, any>;

    beforeAll(async () => {
      app = await installDestination();
    });

    it('installs it: fields from plugin.json, capabilities found by loading it, the URL without its token', () => {
      expect(app).toEqual({
        id: expect.any(Number),
        plugin_type: 'custom',
        name: 'Hog destination',
        description: 'Sends events to a webhook',
        url: tarballUrl(),
        icon: null,
        config_schema: [
          { key: 'url', name: 'Webhook URL', type: 'string', required: true },
          { key: 'token', name: 'Token', type: 'string', secret: true },
        ],
        tag: '1.0.0',
        latest_tag: null,
        is_global: false,
        organization_id: organizationId,
        organization_name: 'Apps organization',
        capabilities: { methods: ['composeWebhook'], jobs: [], scheduled_tasks: [] },
        metrics: {},
        public_jobs: {},
      });
      expect(JSON.stringify(app)).not.toContain('s3cr3t');
    });

    it('stores the entry with its bundle (the relative import included) and keeps the token for upgrades only', async () => {
      const files = await testApp.dataSource.getRepository(PluginSourceFile).findBy({ pluginId: app.id });
      const entry = files.find((file) => file.filename === 'index.ts');
      expect(entry).toMatchObject({ status: 'TRANSPILED', error: null });
      expect(entry?.transpiled).toContain('JSON.stringify({ name })');
      expect(files.map((file) => file.filename).sort()).toEqual(['index.ts', 'plugin.json']);
      const stored = await testApp.dataSource.getRepository(Plugin).findOneByOrFail({ id: app.id });
      expect(stored.urlWithSecrets).toBe(`${tarballUrl()}?private_token=s3cr3t`);
    });

    it('lists it among destinations only: 404 under frontend apps and import apps', async () => {
      const listed = await api.get(destinations());
      expect(listed.body.results.map((plugin: { id: number }) => plugin.id)).toContain(app.id);
      expect((await api.get(destinations(`${app.id}/`))).body.name).toBe('Hog destination');
      for (const path of [frontendApps(`${app.id}/`), importApps(`${app.id}/`)]) {
        const response = await api.get(path);
        expect([response.status, response.body.detail]).toEqual([404, 'Not found.']);
      }
      const frontend = await api.get(frontendApps());
      expect(frontend.body.results.map((plugin: { id: number }) => plugin.id)).not.toContain(app.id);
    });

    it('refuses to install the same URL twice in the organization', async () => {
      const again = await api.post(destinations(), { plugin_type: 'custom', url: tarballUrl() });
      expect([again.status, again.body]).toEqual([
        400,
        {
          type: 'validation_error',
          code: 'invalid_input',
          detail: `Plugin from URL "${tarballUrl()}" already installed!`,
          attr: null,
        },
      ]);
    });

    it('checks for updates against the registry: latest_tag set and shown', async () => {
      latest = '2.0.0';
      const checked = await api.get(destinations(`${app.id}/check_for_updates/`));
      expect(checked.status).toBe(200);
      expect(checked.body.plugin).toMatchObject({ id: app.id, tag: '1.0.0', latest_tag: '2.0.0' });
      expect((await api.get(destinations(`${app.id}/`))).body.latest_tag).toBe('2.0.0');
    });

    it('upgrades from the same URL once the server serves a new version: tag and capabilities follow', async () => {
      version = '1.1.0';
      withOnEvent = true;
      const upgraded = await api.post(destinations(`${app.id}/upgrade/`), {});
      expect(upgraded.status).toBe(200);
      expect(upgraded.body).toMatchObject({
        id: app.id,
        tag: '1.1.0',
        capabilities: { methods: ['composeWebhook', 'onEvent'], jobs: [], scheduled_tasks: [] },
      });
      expect(server.requests.filter((request) => request.endsWith('.tgz')).length).toBeGreaterThanOrEqual(2);
    });

    it('records installed and updated in the activity, newest first', async () => {
      const activity = await api.get(destinations('activity/'));
      expect(activity.status).toBe(200);
      const mine = activity.body.results.filter(
        (entry: { item_id: string }) => entry.item_id === String(app.id),
      );
      expect(mine.map((entry: { activity: string }) => entry.activity)).toEqual(['updated', 'installed']);
      expect(mine[0]).toMatchObject({
        scope: 'Plugin',
        user: { email: 'owner@pipeline-apps.test' },
        detail: { name: 'Hog destination' },
      });
      expect(mine[0].detail.changes).toEqual(
        expect.arrayContaining([
          { type: 'Plugin', action: 'changed', field: 'tag', before: '1.0.0', after: '1.1.0' },
        ]),
      );
      expect(activity.body).toMatchObject({ previous: null, total_count: expect.any(Number) });
    });
  });

  it('answers 400 to an URL that serves no archive, and installs nothing', async () => {
    const before = await testApp.dataSource.getRepository(Plugin).count();
    const response = await api.post(destinations(), { url: `${server.url}/not-an-archive.tgz` });
    expect([response.status, response.body.type, response.body.code]).toEqual([
      400,
      'validation_error',
      'invalid_input',
    ]);
    expect(response.body.detail).toEqual(expect.any(String));
    expect(await testApp.dataSource.getRepository(Plugin).count()).toBe(before);
  });

  it('answers 400 naming the limit to an app whose top level never ends, and installs nothing', async () => {
    // The loop runs on the installer's sandbox thread (apps-install's app-prepare spec shows this
    // thread's timers going on meanwhile); the answer is the same clear 400 as any load failure.
    const folder = path.join(localApps, 'busy');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'plugin.json'), JSON.stringify({ name: 'Busy' }));
    await writeFile(path.join(folder, 'index.ts'), 'export function onEvent() {}\nwhile (true) {}\n');
    const before = await testApp.dataSource.getRepository(Plugin).count();
    const response = await api.post(destinations(), { url: `file:${folder}` });
    expect([response.status, response.body.type, response.body.detail]).toEqual([
      400,
      'validation_error',
      'The app failed to load: loading the app used more than 1000 ms of CPU',
    ]);
    expect(await testApp.dataSource.getRepository(Plugin).count()).toBe(before);
  });

  it('refuses an inline app, and a create without url or name', async () => {
    const inline = await api.post(destinations(), { plugin_type: 'inline', name: 'Inline' });
    expect([inline.status, inline.body.attr, inline.body.detail]).toEqual([
      400,
      'plugin_type',
      'Inline apps ship with the server and cannot be installed through the API.',
    ]);
    const nothing = await api.post(destinations(), {});
    expect([nothing.status, nothing.body.attr, nothing.body.code]).toEqual([400, 'url', 'required']);
    const sourceWithoutName = await api.post(destinations(), { plugin_type: 'source' });
    expect([sourceWithoutName.status, sourceWithoutName.body.attr]).toEqual([400, 'name']);
  });

  describe('local apps', () => {
    it('installs a file: folder inside APPS_LOCAL_DIRECTORY as a frontend (site) app', async () => {
      const response = await api.post(frontendApps(), { url: `file:${path.join(localApps, 'banner')}` });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ plugin_type: 'local', name: 'Banner', capabilities: {} });
      const site = await testApp.dataSource
        .getRepository(PluginSourceFile)
        .findOneByOrFail({ pluginId: response.body.id, filename: 'site.ts' });
      expect(site.status).toBe('TRANSPILED');
      expect(site.transpiled).toMatch(/^\(function \(\) \{/);
      expect((await api.get(frontendApps(`${response.body.id}/`))).status).toBe(200);
    });

    it('refuses a folder outside it', async () => {
      const response = await api.post(frontendApps(), { url: `file:${tmpdir()}` });
      expect(response.status).toBe(400);
    });
  });

  describe('a source app', () => {
    let id: number;

    it('is created with a name only, as a frontend app until its code says otherwise', async () => {
      const created = await api.post(frontendApps(), { plugin_type: 'source', name: 'Edited here' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        plugin_type: 'source',
        name: 'Edited here',
        url: null,
        capabilities: {},
      });
      id = created.body.id;
      expect((await api.get(frontendApps(`${id}/source/`))).body).toEqual({});
    });

    it('shows a compile error in the file, keeps serving the files, and is a destination too once fixed', async () => {
      const broken = await api.patch(frontendApps(`${id}/update_source/`), {
        'plugin.json': JSON.stringify({ name: 'Edited webhook', config: [{ key: 'url', type: 'string' }] }),
        'index.ts': 'export function composeWebhook( {',
      });
      expect(broken.status).toBe(200);
      expect(Object.keys(broken.body).sort()).toEqual(['index.ts', 'plugin.json']);
      const file = await testApp.dataSource
        .getRepository(PluginSourceFile)
        .findOneByOrFail({ pluginId: id, filename: 'index.ts' });
      expect(file.status).toBe('ERROR');
      expect(file.error).toEqual(expect.any(String));
      const stillFrontend = await api.get(frontendApps(`${id}/`));
      expect(stillFrontend.body).toMatchObject({
        name: 'Edited webhook',
        config_schema: [{ key: 'url', type: 'string' }],
      });

      const fixed = await api.patch(frontendApps(`${id}/update_source/`), {
        'index.ts':
          'export function composeWebhook(event: { event: string }) { return { url: "https://example.com", body: event.event }; }',
      });
      expect(fixed.status).toBe(200);
      // Created through the frontend apps, it stays there, and its code makes it a destination too.
      expect((await api.get(frontendApps(`${id}/`))).status).toBe(200);
      const destination = await api.get(destinations(`${id}/`));
      expect(destination.body.capabilities).toEqual({
        methods: ['composeWebhook'],
        jobs: [],
        scheduled_tasks: [],
      });
      const source = await api.get(destinations(`${id}/source/`));
      expect(source.body['index.ts']).toContain('https://example.com');
    });

    it('deletes a file sent as null, and refuses a body that is not a map of file names', async () => {
      const response = await api.patch(destinations(`${id}/update_source/`), { 'notes.md': 'hello' });
      expect(Object.keys(response.body)).toContain('notes.md');
      const removed = await api.patch(destinations(`${id}/update_source/`), { 'notes.md': null });
      expect(Object.keys(removed.body)).not.toContain('notes.md');
      const list = await api.patch(destinations(`${id}/update_source/`), []);
      expect([list.status, list.body.detail]).toEqual([
        400,
        'Invalid data. Expected a dictionary, but got list.',
      ]);
      const traversal = await api.patch(destinations(`${id}/update_source/`), { '../escape.ts': 'x' });
      expect(traversal.status).toBe(400);
    });
  });

  describe('an app created through a collection (issue 29, defect 1)', () => {
    const DECLARED = {
      capabilities: { methods: ['onEvent'] },
      metrics: { delivered: 'sum' },
      public_jobs: { resend: { payload: { since: { type: 'date', title: 'Since' } } } },
      config_schema: [{ key: 'url', name: 'Webhook URL', type: 'string', required: true }],
    };

    it('keeps what its body declares (capabilities, metrics, public jobs, config schema) and answers every route there', async () => {
      const created = await api.post(destinations(), {
        plugin_type: 'source',
        name: 'Declared',
        ...DECLARED,
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ plugin_type: 'source', name: 'Declared', ...DECLARED });
      const id = created.body.id as number;
      const calls: [string, string, unknown][] = [
        ['GET', '', undefined],
        ['PATCH', '', { description: 'Sends to a webhook' }],
        ['GET', 'source/', undefined],
        ['PATCH', 'update_source/', { 'README.md': 'Notes, no code yet' }],
        ['GET', 'check_for_updates/', undefined],
        ['POST', 'upgrade/', {}],
      ];
      for (const [method, suffix, body] of calls) {
        const response = await api.request(method, destinations(`${id}/${suffix}`), { body });
        expect({ call: `${method} ${suffix}`, status: response.status }).toEqual({
          call: `${method} ${suffix}`,
          status: 200,
        });
      }
      expect((await api.get(destinations(`${id}/`))).body).toMatchObject({
        description: 'Sends to a webhook',
        ...DECLARED,
      });
      const listed = await api.get(destinations('?limit=100'));
      expect(listed.body.results.map((plugin: { id: number }) => plugin.id)).toContain(id);
      expect((await api.delete(destinations(`${id}/`))).status).toBe(204);
    });

    it('answers an app created through import apps there, whatever its capabilities', async () => {
      const created = await api.post(importApps(), { plugin_type: 'source', name: 'Importer' });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      expect((await api.get(importApps(`${id}/`))).status).toBe(200);
      const renamed = await api.patch(importApps(`${id}/`), { name: 'Importer 2' });
      expect([renamed.status, renamed.body.name]).toEqual([200, 'Importer 2']);
      const listed = await api.get(importApps());
      expect(listed.body.results.map((plugin: { id: number }) => plugin.id)).toContain(id);
      expect((await api.delete(importApps(`${id}/`))).status).toBe(204);
    });

    it('never lets a declaration reach the columns the apps runtime reads; code that loads replaces it', async () => {
      const created = await api.post(destinations(), {
        plugin_type: 'source',
        name: 'Declares more than it does',
        capabilities: { methods: ['onEvent', 'processEvent'], scheduled_tasks: ['runEveryMinute'] },
        metrics: { sent: 'sum' },
      });
      const id = created.body.id as number;
      const runtimeColumns = async () => {
        const plugin = await testApp.dataSource.getRepository(Plugin).findOneByOrFail({ id });
        return { capabilities: plugin.capabilities, metrics: plugin.metrics };
      };
      expect(await runtimeColumns()).toEqual({ capabilities: {}, metrics: {} });
      const patched = await api.patch(destinations(`${id}/`), {
        capabilities: { methods: ['processEvent'] },
      });
      expect(patched.body.capabilities).toEqual({ methods: ['processEvent'] });
      expect(await runtimeColumns()).toEqual({ capabilities: {}, metrics: {} });

      const built = await api.patch(destinations(`${id}/update_source/`), {
        'index.js': 'exports.composeWebhook = () => null;',
      });
      expect(built.status).toBe(200);
      const code = { methods: ['composeWebhook'], jobs: [], scheduled_tasks: [] };
      expect(await runtimeColumns()).toEqual({ capabilities: code, metrics: {} });
      expect((await api.get(destinations(`${id}/`))).body).toMatchObject({ capabilities: code, metrics: {} });
      // Still in the collection it was created through, and no longer a transformation.
      expect((await api.get(transformations(`${id}/`))).status).toBe(404);
    });

    it('refuses capabilities, metrics, public jobs and config schemas of the wrong shape, naming the field', async () => {
      const existing = await api.post(destinations(), { plugin_type: 'source', name: 'Shapes' });
      const before = await testApp.dataSource.getRepository(Plugin).count();
      const bad: [string, unknown][] = [
        ['capabilities', 'onEvent'],
        ['capabilities', { methods: 'onEvent' }],
        ['capabilities', { methods: ['deleteEverything'] }],
        ['capabilities', { scheduled_tasks: ['onEvent'] }],
        ['capabilities', { jobs: [42] }],
        ['capabilities', { powers: ['all'] }],
        ['metrics', { delivered: 'average' }],
        ['metrics', ['delivered']],
        ['public_jobs', { resend: 'now' }],
        ['config_schema', { url: { type: 'string' } }],
        ['config_schema', [{ name: 'No key' }]],
        ['config_schema', [{ key: 'url', type: 'number' }]],
      ];
      for (const [field, value] of bad) {
        for (const [method, path] of [
          ['POST', destinations()],
          ['PATCH', destinations(`${existing.body.id}/`)],
        ] as const) {
          const body = { plugin_type: 'source', name: 'Bad shape', [field]: value };
          const response = await api.request(method, path, { body });
          expect({
            method,
            value,
            status: response.status,
            type: response.body.type,
            attr: response.body.attr,
          }).toEqual({
            method,
            value,
            status: 400,
            type: 'validation_error',
            attr: field,
          });
        }
      }
      const refusedNull = await api.post(destinations(), {
        plugin_type: 'source',
        name: 'Null',
        capabilities: null,
      });
      expect([refusedNull.status, refusedNull.body.code, refusedNull.body.attr]).toEqual([
        400,
        'null',
        'capabilities',
      ]);
      expect(await testApp.dataSource.getRepository(Plugin).count()).toBe(before);
      expect((await api.get(destinations(`${existing.body.id}/`))).body).toMatchObject({
        name: 'Shapes',
        capabilities: {},
        metrics: {},
        public_jobs: {},
        config_schema: [],
      });
    });

    it('changes plugin_type on PATCH under the rules of create', async () => {
      const other = await testApp.createOwner('plugin-type@pipeline-apps.test', 'Plugin types');
      const app = await installDestination(other.api, other.organizationId);
      const path = destinations(`${app.id}/`, other.organizationId);
      const refusals: [string, string, string][] = [
        [
          'inline',
          'plugin_type',
          'Inline apps ship with the server and cannot be installed through the API.',
        ],
        ['local', 'url', 'Local apps are installed from a file: URL.'],
        ['repository', 'url', 'This app is not in the apps repository.'],
        ['remote', 'plugin_type', '"remote" is not a valid choice.'],
      ];
      for (const [pluginType, attr, detail] of refusals) {
        const response = await other.api.patch(path, { plugin_type: pluginType });
        expect({
          pluginType,
          status: response.status,
          attr: response.body.attr,
          detail: response.body.detail,
        }).toEqual({
          pluginType,
          status: 400,
          attr,
          detail,
        });
      }
      const source = await other.api.patch(path, { plugin_type: 'source' });
      expect([source.status, source.body.plugin_type]).toEqual([200, 'source']);
      // A source app is edited here, not downloaded again.
      const downloads = server.requests.length;
      expect(
        (await other.api.post(destinations(`${app.id}/upgrade/`, other.organizationId), {})).status,
      ).toBe(200);
      expect(server.requests.length).toBe(downloads);
      const back = await other.api.patch(path, { plugin_type: 'custom', name: 'Custom again' });
      expect([back.status, back.body.plugin_type, back.body.name]).toEqual([200, 'custom', 'Custom again']);
      const unchanged = await other.api.patch(path, { plugin_type: null });
      expect([unchanged.status, unchanged.body.plugin_type]).toEqual([200, 'custom']);

      const bare = await other.api.post(destinations('', other.organizationId), {
        plugin_type: 'source',
        name: 'Bare',
      });
      const noUrl = await other.api.patch(destinations(`${bare.body.id}/`, other.organizationId), {
        plugin_type: 'custom',
      });
      expect([noUrl.status, noUrl.body.attr, noUrl.body.code]).toEqual([400, 'url', 'required']);
    });
  });

  describe('update_source with the writable body (issue 29, defect 2)', () => {
    let id: number;

    beforeAll(async () => {
      const created = await api.post(frontendApps(), { plugin_type: 'source', name: 'Fields or files' });
      id = created.body.id as number;
      const built = await api.patch(frontendApps(`${id}/update_source/`), {
        'plugin.json': JSON.stringify({ name: 'Fields or files' }),
        'index.js': 'exports.onEvent = async function () {};',
      });
      expect(built.status).toBe(200);
    });

    const files = async () => Object.keys((await api.get(destinations(`${id}/source/`))).body).sort();

    it("updates the app's fields from them, answering the app, and writes no file", async () => {
      const response = await api.patch(destinations(`${id}/update_source/`), {
        name: 'R',
        description: 'd',
        tag: 'v9',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id,
        name: 'R',
        description: 'd',
        tag: 'v9',
        plugin_type: 'source',
      });
      expect(await files()).toEqual(['index.js', 'plugin.json']);
    });

    it('refuses a body mixing fields and files, or with keys that are neither, naming them, and changes nothing', async () => {
      const mixed = await api.patch(destinations(`${id}/update_source/`), {
        name: 'Mixed',
        'index.js': 'exports.onEvent = () => {};',
      });
      expect([mixed.status, mixed.body.type]).toEqual([400, 'validation_error']);
      expect(mixed.body.detail).toContain('"name"');
      expect(mixed.body.detail).toContain('"index.js"');
      const neither = await api.patch(destinations(`${id}/update_source/`), { tag: 'v10', Makefile: 'all:' });
      expect([neither.status, neither.body.attr]).toEqual([400, 'Makefile']);
      expect(neither.body.detail).toContain('"Makefile"');
      expect(await files()).toEqual(['index.js', 'plugin.json']);
      expect((await api.get(destinations(`${id}/`))).body).toMatchObject({ name: 'R', tag: 'v9' });
    });

    it("applies PATCH :id/'s rules to the fields: validation, global apps for the operator only, admins only", async () => {
      const refusals: [Record<string, unknown>, number, string | null][] = [
        [{ capabilities: { methods: ['everything'] } }, 400, 'capabilities'],
        [{ plugin_type: 'inline' }, 400, 'plugin_type'],
        [{ name: '' }, 400, 'name'],
        [{ is_global: true }, 403, null],
      ];
      for (const [body, status, attr] of refusals) {
        const response = await api.patch(destinations(`${id}/update_source/`), body);
        expect({ body, status: response.status, attr: response.body.attr }).toEqual({ body, status, attr });
      }
      const member = await testApp.createMember(
        'update-source-member@pipeline-apps.test',
        organizationId,
        MembershipLevel.Member,
      );
      const byMember = await member.api.patch(destinations(`${id}/update_source/`), { name: 'By a member' });
      expect([byMember.status, byMember.body.detail]).toEqual([
        403,
        'Your organization access level is insufficient.',
      ]);
      expect((await api.get(destinations(`${id}/`))).body).toMatchObject({ name: 'R', is_global: false });
    });
  });

  describe('access levels and other organizations', () => {
    let outsider: Awaited<ReturnType<ManagementTestApp['createOwner']>>;
    let foreignApp: Record<string, any>;

    beforeAll(async () => {
      outsider = await testApp.createOwner('outsider@pipeline-apps.test', 'Other apps organization');
      const created = await outsider.api.post(
        `/api/organizations/${outsider.organizationId}/pipeline_frontend_apps/`,
        { plugin_type: 'source', name: 'Foreign app' },
      );
      expect(created.status).toBe(201);
      foreignApp = created.body;
    });

    afterEach(async () => {
      await setLevel(PluginsAccessLevel.Install);
      await setLevel(PluginsAccessLevel.Install, outsider.organizationId);
    });

    it("answers 404 for another organization's app, as for an id that does not exist", async () => {
      for (const [method, suffix] of [
        ['GET', ''],
        ['PATCH', ''],
        ['DELETE', ''],
        ['GET', 'source/'],
        ['PATCH', 'update_source/'],
        ['GET', 'check_for_updates/'],
      ] as const) {
        const response = await api.request(method, frontendApps(`${foreignApp.id}/${suffix}`), {
          body: method === 'GET' || method === 'DELETE' ? undefined : {},
        });
        const unknown = await api.request(method, frontendApps(`99999999/${suffix}`), {
          body: method === 'GET' || method === 'DELETE' ? undefined : {},
        });
        expect({ call: `${method} ${suffix}`, status: response.status, body: response.body }).toEqual({
          call: `${method} ${suffix}`,
          status: 404,
          body: unknown.body,
        });
      }
      const listed = await api.get(frontendApps());
      expect(listed.body.results.map((plugin: { id: number }) => plugin.id)).not.toContain(foreignApp.id);
    });

    it('shows a global app to every organization, read-only to those that did not install it', async () => {
      // Made global by an organization at ROOT, which only the instance operator gives (admin CLI).
      await setLevel(PluginsAccessLevel.Root, outsider.organizationId);
      const outsiderApp = `/api/organizations/${outsider.organizationId}/pipeline_frontend_apps/${foreignApp.id}/`;
      const global = await outsider.api.patch(outsiderApp, { is_global: true });
      expect([global.status, global.body.is_global]).toEqual([200, true]);
      const seen = await api.get(frontendApps(`${foreignApp.id}/`));
      expect([seen.status, seen.body.organization_name]).toEqual([200, 'Other apps organization']);
      const edit = await api.patch(frontendApps(`${foreignApp.id}/`), { name: 'Taken over' });
      expect([edit.status, edit.body.detail]).toEqual([
        403,
        'This plugin installation is managed by another organization',
      ]);
      const uninstall = await outsider.api.delete(outsiderApp);
      expect([uninstall.status, uninstall.body.detail]).toEqual([
        400,
        'This plugin is marked as global! Make it local before uninstallation',
      ]);
      await outsider.api.patch(outsiderApp, { is_global: false });
      expect((await api.get(frontendApps(`${foreignApp.id}/`))).status).toBe(404);
    });

    it('lets no organization make an app global at the level new organizations get, on create or update', async () => {
      // What anyone with a key that has organization:write can do: create an organization of their own.
      const created = await outsider.api.post('/api/organizations/', { name: 'Publisher of apps' });
      expect([created.status, created.body.plugins_access_level]).toEqual([201, PluginsAccessLevel.Install]);
      const apps = `/api/organizations/${created.body.id}/pipeline_frontend_apps/`;
      const globalOnCreate = await outsider.api.post(apps, {
        plugin_type: 'source',
        name: 'Backdoor',
        is_global: true,
      });
      expect([globalOnCreate.status, globalOnCreate.body.detail]).toEqual([
        403,
        "This organization can't manage global plugins!",
      ]);
      const local = await outsider.api.post(apps, { plugin_type: 'source', name: 'Backdoor' });
      expect([local.status, local.body.is_global]).toEqual([201, false]);
      const globalOnUpdate = await outsider.api.patch(`${apps}${local.body.id}/`, { is_global: true });
      expect([globalOnUpdate.status, globalOnUpdate.body.detail]).toEqual([
        403,
        "This organization can't manage global plugins!",
      ]);
      expect((await api.get(frontendApps(`${local.body.id}/`))).status).toBe(404);
      expect(await testApp.dataSource.getRepository(Plugin).countBy({ isGlobal: true })).toBe(0);
    });

    it("lets the instance operator make an app global and local again (the admin CLI's service)", async () => {
      await expect(testApp.bootstrap.setAppGlobal(String(foreignApp.id), true)).resolves.toEqual({
        id: foreignApp.id,
        name: 'Foreign app',
        organization_id: outsider.organizationId,
        is_global: true,
      });
      expect((await api.get(frontendApps(`${foreignApp.id}/`))).status).toBe(200);
      await testApp.bootstrap.setAppGlobal(String(foreignApp.id), false);
      expect((await api.get(frontendApps(`${foreignApp.id}/`))).status).toBe(404);
    });

    it('refuses reads below level 3, writes below 6 and global apps below 9', async () => {
      const insufficient = "Your organization's plugin access level is insufficient.";
      const own = await api.post(frontendApps(), { plugin_type: 'source', name: 'Level check' });
      await setLevel(PluginsAccessLevel.None);
      const read = await api.get(destinations());
      expect([read.status, read.body.detail]).toEqual([403, insufficient]);

      await setLevel(PluginsAccessLevel.Config);
      expect((await api.get(destinations())).status).toBe(200);
      const write = await api.post(frontendApps(), { plugin_type: 'source', name: 'Not allowed' });
      expect([write.status, write.body.detail]).toEqual([403, insufficient]);
      const source = await api.get(frontendApps(`${own.body.id}/source/`));
      expect([source.status, source.body.detail]).toEqual([
        403,
        'Plugin source editing is not available for the current organization!',
      ]);

      await setLevel(PluginsAccessLevel.Install);
      const allowed = await api.post(frontendApps(), { plugin_type: 'source', name: 'Allowed' });
      expect(allowed.status).toBe(201);
      const global = await api.post(frontendApps(), {
        plugin_type: 'source',
        name: 'Global',
        is_global: true,
      });
      expect([global.status, global.body.detail]).toEqual([
        403,
        "This organization can't manage global plugins!",
      ]);
      const deleted = await api.delete(frontendApps(`${allowed.body.id}/`));
      expect(deleted.status).toBe(204);
    });

    it('answers 403 to a key without plugin:write on writes, and lets it read', async () => {
      const key = await testApp.createKey('owner@pipeline-apps.test', ['plugin:read']);
      const client = testApp.client(`Bearer ${key}`);
      expect((await client.get(destinations())).status).toBe(200);
      const refused = await client.post(frontendApps(), { plugin_type: 'source', name: 'Read-only key' });
      expect([refused.status, refused.body.detail]).toEqual([
        403,
        "API key missing required scope 'plugin:write'",
      ]);
    });
  });

  describe('members and admins of the organization', () => {
    const insufficient = 'Your organization access level is insufficient.';
    let member: Awaited<ReturnType<ManagementTestApp['createMember']>>;
    let admin: Awaited<ReturnType<ManagementTestApp['createMember']>>;
    let app: Record<string, any>;

    beforeAll(async () => {
      member = await testApp.createMember(
        'member@pipeline-apps.test',
        organizationId,
        MembershipLevel.Member,
      );
      admin = await testApp.createMember('admin@pipeline-apps.test', organizationId, MembershipLevel.Admin);
      const created = await api.post(destinations(), {
        plugin_type: 'source',
        name: 'Configured by an admin',
      });
      app = created.body;
      const built = await api.patch(frontendApps(`${app.id}/update_source/`), {
        'index.js': 'exports.onEvent = async function () {};',
      });
      expect(built.status).toBe(200);
    });

    it('refuses a member every install, edit, upgrade and uninstall of app code, and changes nothing', async () => {
      const pluginsBefore = await testApp.dataSource.getRepository(Plugin).count();
      const downloadsBefore = server.requests.length;
      const sourceBefore = (await api.get(destinations(`${app.id}/source/`))).body;
      const calls: [string, string, unknown][] = [
        ['POST', destinations(), { plugin_type: 'source', name: 'By a member' }],
        ['POST', destinations(), { plugin_type: 'custom', url: tarballUrl() }],
        ['PATCH', destinations(`${app.id}/`), { name: 'Renamed by a member' }],
        ['PATCH', destinations(`${app.id}/update_source/`), { 'index.js': 'exports.onEvent = () => {};' }],
        ['POST', destinations(`${app.id}/upgrade/`), {}],
        ['DELETE', destinations(`${app.id}/`), undefined],
      ];
      for (const [method, path, body] of calls) {
        const response = await member.api.request(method, path, { body });
        expect({ call: `${method} ${path}`, status: response.status, detail: response.body.detail }).toEqual({
          call: `${method} ${path}`,
          status: 403,
          detail: insufficient,
        });
      }
      expect(await testApp.dataSource.getRepository(Plugin).count()).toBe(pluginsBefore);
      expect(server.requests.length).toBe(downloadsBefore);
      expect((await api.get(destinations(`${app.id}/source/`))).body).toEqual(sourceBefore);
      expect((await api.get(destinations(`${app.id}/`))).body.name).toBe('Configured by an admin');
    });

    it("lets a member read the organization's apps and their source", async () => {
      expect((await member.api.get(destinations())).status).toBe(200);
      expect((await member.api.get(destinations(`${app.id}/`))).status).toBe(200);
      expect((await member.api.get(destinations(`${app.id}/source/`))).status).toBe(200);
    });

    it('lets an admin install, edit and uninstall an app', async () => {
      const created = await admin.api.post(frontendApps(), { plugin_type: 'source', name: 'By an admin' });
      expect(created.status).toBe(201);
      const edited = await admin.api.patch(frontendApps(`${created.body.id}/update_source/`), {
        'plugin.json': JSON.stringify({ name: 'Edited by an admin' }),
      });
      expect(edited.status).toBe(200);
      expect((await admin.api.delete(frontendApps(`${created.body.id}/`))).status).toBe(204);
    });
  });

  describe('pipeline_transformations/', () => {
    let transformation: number;
    let both: number;

    /** A source app starts with no code, as a frontend app; its code makes it a transformation. */
    async function sourceApp(name: string, code: string): Promise<number> {
      const created = await api.post(transformations(), { plugin_type: 'source', name });
      expect(created.status).toBe(201);
      const built = await api.patch(frontendApps(`${created.body.id}/update_source/`), {
        'plugin.json': JSON.stringify({ name }),
        'index.js': code,
      });
      expect(built.status).toBe(200);
      return created.body.id as number;
    }

    beforeAll(async () => {
      transformation = await sourceApp('Adds a property', 'exports.processEvent = (event) => event;');
      both = await sourceApp(
        'Transforms and delivers',
        'exports.processEvent = (event) => event; exports.onEvent = async () => {};',
      );
    });

    it('lists and shows an app exporting processEvent, which no other collection has', async () => {
      const listed = await api.get(transformations());
      expect(listed.status).toBe(200);
      expect(listed.body.results.map((plugin: { id: number }) => plugin.id)).toEqual(
        expect.arrayContaining([transformation, both]),
      );
      const shown = await api.get(transformations(`${transformation}/`));
      expect([shown.status, shown.body.capabilities.methods]).toEqual([200, ['processEvent']]);
      for (const path of [
        destinations(`${transformation}/`),
        frontendApps(`${transformation}/`),
        importApps(`${transformation}/`),
      ]) {
        expect((await api.get(path)).status).toBe(404);
      }
      // An app that transforms and delivers is in both collections, as in PostHog.
      expect((await api.get(destinations(`${both}/`))).status).toBe(200);
    });

    it('has the actions of destinations: source, update_source, upgrade, check_for_updates, activity, unused', async () => {
      const source = await api.get(transformations(`${transformation}/source/`));
      expect([source.status, source.body['index.js']]).toEqual([
        200,
        'exports.processEvent = (event) => event;',
      ]);
      const upgraded = await api.post(transformations(`${transformation}/upgrade/`), {});
      expect([upgraded.status, upgraded.body.id]).toEqual([200, transformation]);
      expect((await api.get(transformations(`${transformation}/check_for_updates/`))).status).toBe(200);
      expect((await api.get(transformations('activity/'))).status).toBe(200);
      expect((await api.get(transformations('unused/'))).body).toContain(transformation);
    });

    it('uninstalls it', async () => {
      const renamed = await api.patch(transformations(`${transformation}/`), { name: 'Renamed' });
      expect([renamed.status, renamed.body.name]).toEqual([200, 'Renamed']);
      expect((await api.delete(transformations(`${transformation}/`))).status).toBe(204);
      expect((await api.get(transformations(`${transformation}/`))).status).toBe(404);
    });

    it('needs admin for writes there too', async () => {
      const member = await testApp.createMember(
        'transformations-member@pipeline-apps.test',
        organizationId,
        MembershipLevel.Member,
      );
      const refused = await member.api.patch(transformations(`${both}/update_source/`), { 'index.js': '' });
      expect([refused.status, refused.body.detail]).toEqual([
        403,
        'Your organization access level is insufficient.',
      ]);
    });
  });

  it('lists the apps no project has enabled as unused', async () => {
    const app = await api.post(frontendApps(), { plugin_type: 'source', name: 'Unused check' });
    const before = await api.get(frontendApps('unused/'));
    expect(before.body).toContain(app.body.id);
    await testApp.dataSource.getRepository(PluginConfig).insert({
      pluginId: app.body.id,
      teamId: projectId,
      enabled: true,
      webToken: 'token-of-unused-check-0123456789abcdef',
    });
    const after = await api.get(frontendApps('unused/'));
    expect(after.body).not.toContain(app.body.id);
    expect(after.body.every((id: unknown) => typeof id === 'number')).toBe(true);
  });

  it('records uninstalled in the activity', async () => {
    const app = await api.post(frontendApps(), { plugin_type: 'source', name: 'Short-lived' });
    expect((await api.delete(frontendApps(`${app.body.id}/`))).status).toBe(204);
    const activity = await api.get(frontendApps('activity/?limit=2'));
    expect(activity.body.results[0]).toMatchObject({
      activity: 'uninstalled',
      scope: 'Plugin',
      item_id: String(app.body.id),
      detail: { name: 'Short-lived' },
    });
    expect(activity.body.next).toContain('page=2');
  });

  it('lists enabled configs of export apps in exports_unsubscribe_configs', async () => {
    const app = await installDestinationFromSource();
    await testApp.dataSource.getRepository(PluginConfig).insert({
      pluginId: app,
      teamId: projectId,
      enabled: true,
      webToken: 'token-of-export-check-0123456789abcdef',
    });
    const response = await api.get(destinations('exports_unsubscribe_configs/'));
    expect(response.status).toBe(200);
    expect(response.body.map((config: { plugin: number }) => config.plugin)).toContain(app);
  });

  async function installDestinationFromSource(): Promise<number> {
    const created = await api.post(destinations(), { plugin_type: 'source', name: 'Exporter' });
    await api.patch(destinations(`${created.body.id}/update_source/`), {
      'plugin.json': JSON.stringify({ name: 'Exporter' }),
      'index.js': 'exports.onEvent = async function () {};',
    });
    return created.body.id as number;
  }

  describe('repository/', () => {
    it('serves the bundled catalog when APPS_REPOSITORY_URL is unset', async () => {
      const response = await api.get(destinations('repository/'));
      expect(response.status).toBe(200);
      expect(response.body).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ url: 'https://www.npmjs.com/package/@posthog/geoip-plugin' }),
        ]),
      );
    });

    it('serves APPS_REPOSITORY_URL, and a 503 with a clear message when it fails', async () => {
      const catalog = [{ name: 'Loopback app', url: tarballUrl(), description: 'served by the test' }];
      let failing = false;
      server.routes.set('/catalog.json', () =>
        failing ? [500, 'down'] : [200, JSON.stringify(catalog), 'application/json'],
      );
      const other = await startManagementTestApp({
        apps: { ...loadManagementConfig({}).apps, repositoryUrl: `${server.url}/catalog.json` },
      });
      try {
        const owner = await other.createOwner('owner@catalog.test');
        const path = `/api/organizations/${owner.organizationId}/pipeline_destinations/repository/`;
        expect((await owner.api.get(path)).body).toEqual(catalog);
        failing = true;
        const down = await owner.api.get(path);
        expect([down.status, down.body.type, down.body.detail]).toEqual([
          503,
          'server_error',
          'The apps repository could not be read: it answered 500.',
        ]);
      } finally {
        await other.close();
      }
    });
  });
});
