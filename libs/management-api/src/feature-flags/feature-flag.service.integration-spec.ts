import { randomUUID } from 'node:crypto';
import {
  ActivityLog,
  Cohort,
  Dashboard,
  FeatureFlag,
  MembershipLevel,
  OrganizationResourceAccess,
  ResourceAccessLevel,
} from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import type { ApiError } from '../common/api.error';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedMember, seedProject } from '../testing/fixtures.util';
import type { User } from '@hogbase/postgres';
import { FeatureFlagsModule } from './feature-flags.module';
import { FeatureFlagService } from './feature-flag.service';

type Caller = ResolvedProject & { user: User };

/** The ApiError a call fails with, as `{code, attr}` (or the other error it throws). */
async function failure(call: Promise<unknown>): Promise<Pick<ApiError, 'code' | 'attr'>> {
  const error = (await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (reason: unknown) => reason,
  )) as ApiError;
  return { code: error.code, attr: error.attr };
}

describe('FeatureFlagService', () => {
  let context: FeatureTestContext;
  let service: FeatureFlagService;
  let owner: Caller;

  beforeAll(async () => {
    context = await createFeatureTestingModule([FeatureFlagsModule]);
    service = context.get(FeatureFlagService);
    owner = await seedProject(context.dataSource);
  });

  afterAll(() => context?.close());

  const newKey = () => `flag-${randomUUID().slice(0, 8)}`;

  it('creates a flag with its usage dashboard and a "created" activity entry, in one unit of work', async () => {
    const key = newKey();
    const flag = await service.create(owner.user, owner, { key, name: 'Checkout' });
    const stored = await context.dataSource.getRepository(FeatureFlag).findOneByOrFail({ id: flag.id });
    expect(stored.usageDashboardId).not.toBeNull();
    const dashboard = await context.dataSource
      .getRepository(Dashboard)
      .findOneByOrFail({ id: stored.usageDashboardId! });
    expect(dashboard.name).toBe(`Generated Dashboard: ${key} Usage`);
    const entries = await context.dataSource
      .getRepository(ActivityLog)
      .findBy({ scope: 'FeatureFlag', itemId: String(flag.id) });
    expect(entries.map((entry) => entry.activity)).toEqual(['created']);
  });

  it('refuses a second live flag with the same key, and frees the key of a deleted one', async () => {
    const key = newKey();
    const first = await service.create(owner.user, owner, { key });
    expect(await failure(service.create(owner.user, owner, { key }))).toEqual({
      code: 'unique',
      attr: 'key',
    });
    await service.update(owner.user, owner, first.id, { deleted: true });
    const second = await service.create(owner.user, owner, { key });
    expect(second.id).not.toBe(first.id);
  });

  it('rolls back every write of an update that fails midway', async () => {
    // Renaming to a key first removes a deleted flag holding it, then fails on the live one.
    const taken = newKey();
    const flags = context.dataSource.getRepository(FeatureFlag);
    const live = await service.create(owner.user, owner, { key: taken });
    const deleted = await flags.save(
      flags.create({ teamId: owner.team.id, key: taken, deleted: true, createdById: owner.user.id }),
    );
    const flag = await service.create(owner.user, owner, { key: newKey(), name: 'before' });
    const { version } = await flags.findOneByOrFail({ id: flag.id });
    expect(await failure(service.update(owner.user, owner, flag.id, { key: taken, name: 'after' }))).toEqual({
      code: 'unique',
      attr: 'key',
    });
    expect(await flags.existsBy({ id: deleted.id })).toBe(true);
    expect(await flags.existsBy({ id: live.id })).toBe(true);
    const stored = await flags.findOneByOrFail({ id: flag.id });
    expect({ key: stored.key, name: stored.name, version: stored.version }).toEqual({
      key: flag.key,
      name: 'before',
      version,
    });
  });

  it("answers another project's flag as an unknown one (404)", async () => {
    const other = await seedProject(context.dataSource);
    const theirs = await service.create(other.user, other, { key: newKey() });
    expect(await failure(service.retrieve(owner.user, owner, theirs.id))).toEqual({
      code: 'not_found',
      attr: null,
    });
    expect(await failure(service.update(owner.user, owner, theirs.id, { name: 'x' }))).toMatchObject({
      code: 'not_found',
    });
  });

  it('accepts cohorts of the project that target persons only', async () => {
    const cohorts = context.dataSource.getRepository(Cohort);
    const other = await seedProject(context.dataSource);
    const foreign = await cohorts.save(cohorts.create({ teamId: other.team.id, name: 'theirs' }));
    const behavioral = await cohorts.save(
      cohorts.create({
        teamId: owner.team.id,
        name: 'did checkout',
        filters: { properties: { type: 'AND', values: [{ type: 'behavioral', key: 'checkout' }] } },
      }),
    );
    const includesBehavioral = await cohorts.save(
      cohorts.create({
        teamId: owner.team.id,
        name: 'nested',
        filters: {
          properties: { type: 'AND', values: [{ type: 'cohort', key: 'id', value: behavioral.id }] },
        },
      }),
    );
    const filtersOn = (cohortId: number) => ({
      groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }], rollout_percentage: 100 }],
    });
    expect(
      await failure(service.create(owner.user, owner, { key: newKey(), filters: filtersOn(foreign.id) })),
    ).toEqual({ code: 'cohort_does_not_exist', attr: 'filters' });
    expect(
      await failure(
        service.create(owner.user, owner, { key: newKey(), filters: filtersOn(includesBehavioral.id) }),
      ),
    ).toEqual({ code: 'behavioral_cohort_found', attr: 'filters' });
  });

  it('lets only the creator and admins edit when the organization makes flags view-only', async () => {
    const project = await seedProject(context.dataSource);
    const access = context.dataSource.getRepository(OrganizationResourceAccess);
    await access.save(
      access.create({
        organizationId: project.organization.id,
        resource: 'feature flags',
        accessLevel: ResourceAccessLevel.CanOnlyView,
      }),
    );
    const member = await seedMember(context.dataSource, project, MembershipLevel.Member);
    const admin = await seedMember(context.dataSource, project, MembershipLevel.Admin);
    const flag = await service.create(project.user, project, { key: newKey() });
    expect((await service.retrieve(member.user, member, flag.id)).can_edit).toBe(false);
    expect(await failure(service.update(member.user, member, flag.id, { name: 'x' }))).toMatchObject({
      code: 'permission_denied',
    });
    expect((await service.update(admin.user, admin, flag.id, { name: 'by admin' })).name).toBe('by admin');
    const own = await service.create(member.user, member, { key: newKey() });
    expect((await service.update(member.user, member, own.id, { name: 'mine' })).can_edit).toBe(true);
  });
});
