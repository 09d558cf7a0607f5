import {
  Plugin,
  PluginSourceFile,
  PluginsAccessLevel,
  type Organization,
  type User,
} from '@hogbase/postgres';
import { ApiError } from '../common/api.error';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedProject } from '../testing/fixtures.util';
import { PipelineAppsModule } from './pipeline-apps.module';
import { PluginSourceService } from './plugin-source.service';
import { PluginService } from './plugin.service';

const PAGE = { limit: 100, offset: 0 };

/** The ApiError `work` fails with, as the API would answer it. */
async function refusal(work: Promise<unknown>): Promise<Pick<ApiError, 'status' | 'code' | 'detail'>> {
  const error: unknown = await work.then(
    () => new Error('expected a refusal'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApiError)) throw error;
  return { status: error.status, code: error.code, detail: error.detail };
}

const INSUFFICIENT = "Your organization's plugin access level is insufficient.";

describe('PluginService (pipeline apps)', () => {
  let context: FeatureTestContext;
  let plugins: PluginService;
  let sources: PluginSourceService;
  let organization: Organization;
  let user: User;

  beforeAll(async () => {
    context = await createFeatureTestingModule([PipelineAppsModule]);
    plugins = context.get(PluginService);
    sources = context.get(PluginSourceService);
  });

  afterAll(async () => {
    await context?.close();
  });

  beforeEach(async () => {
    ({ organization, user } = await seedProject(context.dataSource));
  });

  const sourceApp = (name: string, fields: Record<string, unknown> = {}) =>
    plugins.create(organization, 'pipeline_destinations', user, { plugin_type: 'source', name, ...fields });

  /** A global source app of a second organization, which may install apps (root access). */
  async function anotherOrganizationsGlobalApp() {
    const other = await seedProject(context.dataSource, undefined, 'Other');
    other.organization.pluginsAccessLevel = PluginsAccessLevel.Root;
    const global = await plugins.create(other.organization, 'pipeline_destinations', other.user, {
      plugin_type: 'source',
      name: 'Theirs, global',
      is_global: true,
    });
    return { other, global };
  }

  describe("the organization's plugins access level", () => {
    it('lets an organization below INSTALL read its apps but neither install nor uninstall one', async () => {
      const app = await sourceApp('Installed at INSTALL');
      organization.pluginsAccessLevel = PluginsAccessLevel.Config;

      const listed = await plugins.list(organization, 'pipeline_destinations', PAGE);
      expect(listed.results.map((result) => result.id)).toEqual([app.id]);
      expect(await refusal(sourceApp('Refused'))).toEqual({
        status: 403,
        code: 'permission_denied',
        detail: INSUFFICIENT,
      });
      expect(
        await refusal(plugins.remove(organization, 'pipeline_destinations', app.id, user)),
      ).toMatchObject({
        status: 403,
        detail: INSUFFICIENT,
      });
      expect(
        await context.dataSource.getRepository(Plugin).countBy({ organizationId: organization.id }),
      ).toBe(1);
    });

    it('refuses even reads below CONFIG, and a malformed id gets that 403 before any 404', async () => {
      organization.pluginsAccessLevel = PluginsAccessLevel.None;
      expect(await refusal(plugins.list(organization, 'pipeline_destinations', PAGE))).toMatchObject({
        status: 403,
        detail: INSUFFICIENT,
      });
      expect(await refusal(plugins.retrieve(organization, 'pipeline_destinations', null))).toMatchObject({
        status: 403,
      });

      organization.pluginsAccessLevel = PluginsAccessLevel.Config;
      expect(await refusal(plugins.retrieve(organization, 'pipeline_destinations', null))).toMatchObject({
        status: 404,
      });
    });

    it('makes an app global only at ROOT, and refuses to uninstall a global app', async () => {
      expect(await refusal(sourceApp('Global', { is_global: true }))).toEqual({
        status: 403,
        code: 'permission_denied',
        detail: "This organization can't manage global plugins!",
      });

      organization.pluginsAccessLevel = PluginsAccessLevel.Root;
      const global = await sourceApp('Global', { is_global: true });
      expect(await refusal(plugins.remove(organization, 'pipeline_destinations', global.id, user))).toEqual({
        status: 400,
        code: 'invalid_input',
        detail: 'This plugin is marked as global! Make it local before uninstallation',
      });
      expect(await context.dataSource.getRepository(Plugin).existsBy({ id: global.id })).toBe(true);
    });

    it("shows another organization's global app read-only, and its other apps not at all", async () => {
      const { other, global } = await anotherOrganizationsGlobalApp();
      const local = await plugins.create(other.organization, 'pipeline_destinations', other.user, {
        plugin_type: 'source',
        name: 'Theirs',
      });

      expect((await plugins.retrieve(organization, 'pipeline_destinations', global.id)).name).toBe(
        'Theirs, global',
      );
      expect(
        await refusal(
          plugins.update(organization, 'pipeline_destinations', global.id, user, { name: 'Mine' }),
        ),
      ).toEqual({
        status: 403,
        code: 'permission_denied',
        detail: 'This plugin installation is managed by another organization',
      });
      expect(await refusal(sources.source(organization, 'pipeline_destinations', global.id))).toMatchObject({
        status: 404,
      });
      expect(await refusal(plugins.retrieve(organization, 'pipeline_destinations', local.id))).toMatchObject({
        status: 404,
      });
    });
  });

  describe('collections', () => {
    it('keeps an app in the collection it was created through, and in those its capabilities name', async () => {
      const plain = await plugins.create(organization, 'pipeline_frontend_apps', user, {
        plugin_type: 'source',
        name: 'Created through frontend apps, delivers events',
        capabilities: { methods: ['onEvent'] },
      });
      const transformation = await sourceApp('Declares processEvent', {
        capabilities: { methods: ['processEvent'] },
      });

      const ids = async (
        collection: 'pipeline_destinations' | 'pipeline_transformations' | 'pipeline_frontend_apps',
      ) =>
        (await plugins.list(organization, collection, PAGE)).results
          // Other tests' global apps are seen too.
          .filter((result) => result.organization_id === organization.id)
          .map((result) => result.id);
      expect(await ids('pipeline_frontend_apps')).toEqual([plain.id]);
      expect(await ids('pipeline_destinations')).toEqual([plain.id, transformation.id]);
      expect(await ids('pipeline_transformations')).toEqual([transformation.id]);
      expect(
        await refusal(plugins.retrieve(organization, 'pipeline_transformations', plain.id)),
      ).toMatchObject({ status: 404 });
      const row = await context.dataSource.getRepository(Plugin).findOneByOrFail({ id: plain.id });
      expect(row.createdThrough).toBe('pipeline_frontend_apps');
    });
  });

  describe('capabilities', () => {
    it('shows what a body declares but never stores it where the runtime reads, until the code says', async () => {
      const app = await sourceApp('Declared', {
        capabilities: { methods: ['onEvent'] },
        metrics: { sent: 'sum' },
      });
      const runtimeColumns = async () => {
        const row = await context.dataSource.getRepository(Plugin).findOneByOrFail({ id: app.id });
        return { capabilities: row.capabilities, metrics: row.metrics };
      };
      expect(app).toMatchObject({ capabilities: { methods: ['onEvent'] }, metrics: { sent: 'sum' } });
      expect(await runtimeColumns()).toEqual({ capabilities: {}, metrics: {} });

      const patched = await plugins.update(organization, 'pipeline_destinations', app.id, user, {
        capabilities: { methods: ['processEvent'] },
      });
      expect(patched.capabilities).toEqual({ methods: ['processEvent'] });
      expect(await runtimeColumns()).toEqual({ capabilities: {}, metrics: {} });

      await sources.updateSource(
        organization,
        'pipeline_destinations',
        app.id,
        user,
        new Map([['index.js', 'exports.onEvent = () => {};']]),
      );
      const code = { methods: ['onEvent'], jobs: [], scheduled_tasks: [] };
      expect(await runtimeColumns()).toEqual({ capabilities: code, metrics: {} });
      expect(await plugins.retrieve(organization, 'pipeline_destinations', app.id)).toMatchObject({
        capabilities: code,
        metrics: {},
      });
    });
  });

  describe('update_source', () => {
    it('keeps a build error in its file and the capabilities of the last code that loaded', async () => {
      const app = await sourceApp('Edited');
      const change = (files: [string, string | null][]) =>
        sources.updateSource(organization, 'pipeline_destinations', app.id, user, new Map(files));
      await change([['index.js', 'exports.onEvent = () => {};']]);

      const files = await change([
        ['index.js', 'exports.onEvent = ( {'],
        ['notes.md', 'kept as it is'],
      ]);
      expect(Object.keys(files)).toEqual(['index.js', 'notes.md']);
      const stored = await context.dataSource
        .getRepository(PluginSourceFile)
        .findOneByOrFail({ pluginId: app.id, filename: 'index.js' });
      expect(stored).toMatchObject({ status: 'ERROR', error: expect.any(String) as unknown });
      const row = await context.dataSource.getRepository(Plugin).findOneByOrFail({ id: app.id });
      expect(row.capabilities).toEqual({ methods: ['onEvent'], jobs: [], scheduled_tasks: [] });

      expect(Object.keys(await change([['notes.md', null]]))).toEqual(['index.js']);
    });

    it('refuses a plugin.json it cannot read and leaves the files and the app as they were', async () => {
      const app = await sourceApp('Unreadable');
      await sources.updateSource(
        organization,
        'pipeline_destinations',
        app.id,
        user,
        new Map([['a.md', 'x']]),
      );

      expect(
        await refusal(
          sources.updateSource(
            organization,
            'pipeline_destinations',
            app.id,
            user,
            new Map([
              ['plugin.json', '{ not json'],
              ['b.md', 'y'],
            ]),
          ),
        ),
      ).toMatchObject({ status: 400 });
      expect(await sources.source(organization, 'pipeline_destinations', app.id)).toEqual({ 'a.md': 'x' });
      expect((await plugins.retrieve(organization, 'pipeline_destinations', app.id)).name).toBe('Unreadable');
    });

    it('is for the apps of the organization: a global app of another is 404 there', async () => {
      const { global } = await anotherOrganizationsGlobalApp();
      expect(
        await refusal(
          sources.updateSource(
            organization,
            'pipeline_destinations',
            global.id,
            user,
            new Map([['a.md', 'x']]),
          ),
        ),
      ).toMatchObject({ status: 404 });
      expect(await context.dataSource.getRepository(PluginSourceFile).countBy({ pluginId: global.id })).toBe(
        0,
      );
    });
  });
});
