import type { ResolvedProject } from '../auth/access.decorator';
import { ApiValidationPipe } from '../common/validation.pipe';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedProject } from '../testing/fixtures.util';
import type { User } from '@hogbase/postgres';
import { MAX_ACTIVITY_PAGE } from './activity-log.presenter';
import { ActivityLogService, toActivityPage } from './activity-log.service';
import { ActivityModule } from './activity.module';
import { ActivityPageQueryDto } from './activity-page-query.dto';

const URL_OF_LOG = new URL('https://hog.example/api/projects/1/feature_flags/activity/');

describe('ActivityLogService', () => {
  let context: FeatureTestContext;
  let activity: ActivityLogService;
  let project: ResolvedProject & { user: User };

  beforeAll(async () => {
    context = await createFeatureTestingModule([ActivityModule]);
    activity = context.get(ActivityLogService);
    project = await seedProject(context.dataSource);
  });

  afterAll(async () => {
    await context?.close();
  });

  /** The query string as the API's validation pipe reads it into the DTO. */
  const query = (raw: Record<string, string>) =>
    new ApiValidationPipe().transform(raw, {
      type: 'query',
      metatype: ActivityPageQueryDto,
    }) as Promise<ActivityPageQueryDto>;

  const record = (target: ResolvedProject & { user: User }, scope: string, itemId: string) =>
    activity.record({
      organizationId: target.organization.id,
      teamId: target.team.id,
      user: target.user,
      scope,
      itemId,
      activity: 'updated',
      name: `item ${itemId}`,
      changes: null,
    });

  describe('?page=', () => {
    it.each([
      ['abc', 'A valid integer is required.'],
      ['1.5', 'A valid integer is required.'],
      ['0', 'Ensure this value is greater than or equal to 1.'],
      ['-2', 'Ensure this value is greater than or equal to 1.'],
      [String(MAX_ACTIVITY_PAGE + 1), `Ensure this value is less than or equal to ${MAX_ACTIVITY_PAGE}.`],
    ])('refuses page=%s with a 400 on page', async (page, detail) => {
      await expect(query({ page })).rejects.toMatchObject({
        status: 400,
        code: 'invalid',
        detail,
        attr: 'page',
      });
    });

    it('serves the last page anyone may ask for at the largest page size, empty, without failing in SQL', async () => {
      const page = await activity.page(await query({ page: String(MAX_ACTIVITY_PAGE), limit: '100000' }), {
        teamId: project.team.id,
        scope: 'FeatureFlag',
      });
      expect(page).toMatchObject({ results: [], page: MAX_ACTIVITY_PAGE, limit: 1_000 });
    });
  });

  it('pages 10 entries by default, at most 1,000, and reads a limit that is not a positive integer as 10', async () => {
    const own = await seedProject(context.dataSource);
    for (let index = 0; index < 12; index++) await record(own, 'Paged', String(index));
    const filter = { teamId: own.team.id, scope: 'Paged' };
    for (const limit of [undefined, '0', 'abc', '-3']) {
      const page = await activity.page(await query(limit === undefined ? {} : { limit }), filter);
      expect([page.results.length, page.limit, page.total]).toEqual([10, 10, 12]);
    }
    expect((await query({ limit: '5000' })).limit).toBe(1_000);
    const second = await activity.page(await query({ page: '2', limit: '5' }), filter);
    expect(second.results.map((entry) => entry.item_id)).toEqual(['6', '5', '4', '3', '2']);
    expect(toActivityPage(URL_OF_LOG, second)).toMatchObject({
      next: `${URL_OF_LOG.href}?page=3&limit=5`,
      previous: `${URL_OF_LOG.href}?page=1&limit=5`,
      total_count: 12,
    });
  });

  it("lists only the filter's project and scopes", async () => {
    const own = await seedProject(context.dataSource);
    const other = await seedProject(context.dataSource);
    await record(own, 'Plugin', 'app');
    await record(own, 'PluginConfig', 'config');
    await record(own, 'FeatureFlag', 'flag');
    await record(other, 'Plugin', 'theirs');
    const first = await query({});
    const apps = await activity.page(first, {
      organizationId: own.organization.id,
      scope: ['Plugin', 'PluginConfig'],
    });
    expect(apps.results.map((entry) => entry.item_id).sort()).toEqual(['app', 'config']);
    const flag = await activity.page(first, { teamId: own.team.id, scope: 'FeatureFlag', itemId: 'flag' });
    expect(flag.results).toMatchObject([{ item_id: 'flag', user: { email: own.user.email } }]);
  });

  it("records an entry in the caller's unit of work, so that it is undone with the change", async () => {
    const own = await seedProject(context.dataSource);
    const failure = new Error('the change failed after its entry was recorded');
    await expect(
      context.get(UnitOfWork).run(async () => {
        await record(own, 'FeatureFlag', 'rolled-back');
        throw failure;
      }),
    ).rejects.toBe(failure);
    const page = await activity.page(await query({}), { teamId: own.team.id, scope: 'FeatureFlag' });
    expect(page.total).toBe(0);
  });
});
