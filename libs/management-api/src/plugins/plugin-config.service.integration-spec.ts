import { plainToInstance } from 'class-transformer';
import { ActivityLog, PluginConfig, type User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { ApiError } from '../common/api.error';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedProject } from '../testing/fixtures.util';
import { PipelineAppsModule } from './pipeline-apps.module';
import { PluginLogsQueryDto } from './plugin-config-query.dto';
import { SECRET_MASK } from './plugin-config-values.util';
import { PluginConfigService } from './plugin-config.service';
import { PluginService } from './plugin.service';

async function refusal(
  work: Promise<unknown>,
): Promise<Pick<ApiError, 'status' | 'code' | 'detail' | 'attr'>> {
  const error: unknown = await work.then(
    () => new Error('expected a refusal'),
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApiError)) throw error;
  return { status: error.status, code: error.code, detail: error.detail, attr: error.attr };
}

const SCHEMA = [
  { key: 'host', type: 'string' },
  { key: 'apiKey', type: 'string', secret: true },
];

describe('PluginConfigService (app configs)', () => {
  let context: FeatureTestContext;
  let configs: PluginConfigService;
  let plugins: PluginService;
  let project: ResolvedProject & { user: User };
  let pluginId: number;

  beforeAll(async () => {
    context = await createFeatureTestingModule([PipelineAppsModule]);
    configs = context.get(PluginConfigService);
    plugins = context.get(PluginService);
  });

  afterAll(async () => {
    await context?.close();
  });

  beforeEach(async () => {
    project = await seedProject(context.dataSource);
    const app = await plugins.create(project.organization, 'pipeline_destinations', project.user, {
      plugin_type: 'source',
      name: 'With a secret',
      config_schema: SCHEMA,
    });
    pluginId = app.id;
  });

  const storedConfig = async (id: number) =>
    (await context.dataSource.getRepository(PluginConfig).findOneByOrFail({ id })).config;

  describe('secret values', () => {
    it('stores a secret sealed and answers it masked, in every answer and in the activity', async () => {
      const created = await configs.create(project, project.user, {
        plugin: pluginId,
        config: { host: 'h.example', apiKey: 'the-secret' },
      });
      expect(created.config).toEqual({ host: 'h.example', apiKey: SECRET_MASK });
      expect((await configs.retrieve(project, created.id)).config.apiKey).toBe(SECRET_MASK);
      const listed = await configs.list(project, { limit: 10, offset: 0 });
      expect(listed.results[0].config.apiKey).toBe(SECRET_MASK);

      const stored = await storedConfig(created.id);
      expect(stored.host).toBe('h.example');
      expect(stored.apiKey).toEqual({ sealed: expect.any(String) as unknown });
      expect(JSON.stringify(stored)).not.toContain('the-secret');

      await configs.update(project, project.user, created.id, {
        config: { host: 'h', apiKey: 'another-secret' },
      });
      const entries = await context.dataSource.getRepository(ActivityLog).findBy({ teamId: project.team.id });
      expect(JSON.stringify(entries.map((entry) => entry.detail))).not.toMatch(/the-secret|another-secret/);
    });

    it('keeps the stored secret when it is sent back masked or left out', async () => {
      const created = await configs.create(project, project.user, {
        plugin: pluginId,
        config: { host: 'h', apiKey: 'the-secret' },
      });
      const sealed = (await storedConfig(created.id)).apiKey;

      await configs.update(project, project.user, created.id, {
        config: { host: 'h2', apiKey: SECRET_MASK },
      });
      expect(await storedConfig(created.id)).toEqual({ host: 'h2', apiKey: sealed });
      await configs.update(project, project.user, created.id, { config: { host: 'h3' } });
      expect(await storedConfig(created.id)).toEqual({ host: 'h3', apiKey: sealed });
    });
  });

  describe('which app a config names', () => {
    it("answers DRF's bad pk for an app the organization cannot see or an id no row can have", async () => {
      const other = await seedProject(context.dataSource, undefined, 'Other');
      const theirs = await plugins.create(other.organization, 'pipeline_destinations', other.user, {
        plugin_type: 'source',
        name: 'Theirs',
      });
      for (const plugin of [theirs.id, 0, -1, 2 ** 31]) {
        expect(await refusal(configs.create(project, project.user, { plugin }))).toEqual({
          status: 400,
          code: 'does_not_exist',
          detail: `Invalid pk "${plugin}" - object does not exist.`,
          attr: 'plugin',
        });
      }
    });

    it('allows one live config per app and project', async () => {
      const first = await configs.create(project, project.user, { plugin: pluginId });
      expect(await refusal(configs.create(project, project.user, { plugin: pluginId }))).toEqual({
        status: 400,
        code: 'unique',
        detail: 'This app is already configured for this project.',
        attr: 'plugin',
      });
      await configs.remove(project, project.user, first.id);
      expect((await configs.create(project, project.user, { plugin: pluginId })).plugin).toBe(pluginId);
    });

    it("answers 404 for another project's config, a deleted one and a malformed id", async () => {
      const config = await configs.create(project, project.user, { plugin: pluginId });
      const other = await seedProject(context.dataSource, undefined, 'Other');
      expect(await refusal(configs.retrieve(other, config.id))).toMatchObject({ status: 404 });
      expect(await refusal(configs.retrieve(project, null))).toMatchObject({ status: 404 });
      await configs.remove(project, project.user, config.id);
      expect(await refusal(configs.retrieve(project, config.id))).toMatchObject({ status: 404 });
    });
  });

  describe('logs', () => {
    const query = (values: Record<string, unknown>) => plainToInstance(PluginLogsQueryDto, values);

    it('reads its query once the config is found: an unknown config is 404 whatever the query holds', async () => {
      const config = await configs.create(project, project.user, { plugin: pluginId });
      expect(await refusal(configs.logs(project, config.id + 1000, query({ limit: 'abc' })))).toMatchObject({
        status: 404,
      });
      expect(await refusal(configs.logs(project, config.id, query({ limit: 'abc' })))).toEqual({
        status: 400,
        code: 'invalid_input',
        detail: 'limit must be a positive integer.',
        attr: 'limit',
      });
      expect(await refusal(configs.logs(project, config.id, query({ search: ['a', 'b'] })))).toMatchObject({
        detail: 'search must be given once.',
      });
      expect(
        await configs.logs(project, config.id, query({ limit: '900', type_filter: 'info,warn' })),
      ).toEqual({
        page: { limit: 500, offset: 0 },
        count: 0,
        results: [],
      });
    });
  });
});
