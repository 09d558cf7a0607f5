import { randomUUID } from 'node:crypto';
import { MembershipLevel, ResourceAccessLevel, type FeatureFlag, type User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedMember, seedProject } from '../testing/fixtures.util';
import { seedFlag, seedRole, setFlagsAccessLevel } from '../testing/role-fixtures.util';
import { FeatureFlagRoleAccessService } from './feature-flag-role-access.service';
import { RolesModule } from './roles.module';

const PAGE = { limit: 100, offset: 0 };
const CANNOT_MANAGE = {
  status: 403,
  code: 'permission_denied',
  detail: "You can't edit roles for this feature flag.",
};
const FLAG_NOT_FOUND = { status: 404, code: 'not_found', detail: 'Feature flag not found.' };

describe('FeatureFlagRoleAccessService', () => {
  let context: FeatureTestContext;
  let access: FeatureFlagRoleAccessService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([RolesModule]);
    access = context.get(FeatureFlagRoleAccessService);
  });

  afterAll(async () => {
    await context?.close();
  });

  /** An organization whose members only view flags, with a flag its owner created. */
  async function viewOnlyOrganization(): Promise<{
    owner: ResolvedProject & { user: User };
    flag: FeatureFlag;
  }> {
    const owner = await seedProject(context.dataSource);
    await setFlagsAccessLevel(context.dataSource, owner, ResourceAccessLevel.CanOnlyView);
    return { owner, flag: await seedFlag(context.dataSource, owner, owner.user) };
  }

  const member = (project: ResolvedProject, level = MembershipLevel.Member) =>
    seedMember(context.dataSource, project, level);

  describe('who may manage a flag’s role access, when members only view flags', () => {
    it('refuses a member with no role and a member whose roles only view, on create and delete', async () => {
      const { owner, flag } = await viewOnlyOrganization();
      const role = await seedRole(context.dataSource, owner);
      const link = await access.create(owner.user, owner, flag.id, { role_id: role.id });
      const noRole = await member(owner);
      const viewer = await member(owner);
      await seedRole(context.dataSource, owner, ResourceAccessLevel.CanOnlyView, [viewer.user]);
      for (const caller of [noRole, viewer]) {
        await expect(access.create(caller.user, caller, flag.id, { role_id: role.id })).rejects.toMatchObject(
          CANNOT_MANAGE,
        );
        await expect(access.remove(caller.user, caller, flag.id, link.id)).rejects.toMatchObject(
          CANNOT_MANAGE,
        );
        // Reading stays open to them.
        expect((await access.list(caller.user, caller, flag.id, PAGE)).count).toBe(1);
      }
    });

    it('lets an admin, the flag’s creator (on that flag only) and the holder of an "edit" role', async () => {
      const { owner, flag } = await viewOnlyOrganization();
      const admin = await member(owner, MembershipLevel.Admin);
      const creator = await member(owner);
      const ownFlag = await seedFlag(context.dataSource, owner, creator.user);
      const editor = await member(owner);
      await seedRole(context.dataSource, owner, ResourceAccessLevel.CanAlwaysEdit, [editor.user]);
      const granted = [
        [admin, flag],
        [creator, ownFlag],
        [editor, flag],
      ] as const;
      for (const [caller, target] of granted) {
        const role = await seedRole(context.dataSource, owner);
        const link = await access.create(caller.user, caller, target.id, { role_id: role.id });
        expect([link.role_id, link.feature_flag.id]).toEqual([role.id, target.id]);
        await access.remove(caller.user, caller, target.id, link.id);
      }
      const role = await seedRole(context.dataSource, owner);
      await expect(access.create(creator.user, creator, flag.id, { role_id: role.id })).rejects.toMatchObject(
        CANNOT_MANAGE,
      );
    });
  });

  it('lets any member manage role access when the organization set no level for flags', async () => {
    const owner = await seedProject(context.dataSource);
    const flag = await seedFlag(context.dataSource, owner, owner.user);
    const plain = await member(owner);
    const role = await seedRole(context.dataSource, owner);
    const link = await access.create(plain.user, plain, flag.id, { role_id: role.id });
    await access.remove(plain.user, plain, flag.id, link.id);
    expect((await access.list(plain.user, plain, flag.id, PAGE)).count).toBe(0);
  });

  it("answers 'Feature flag not found.' for another project's flag before any permission check", async () => {
    const { owner } = await viewOnlyOrganization();
    const outsider = await seedProject(context.dataSource);
    const theirFlag = await seedFlag(context.dataSource, outsider, outsider.user);
    const role = await seedRole(context.dataSource, owner);
    // A plain member, who may not manage role access: the unknown flag still answers first.
    const caller = await member(owner);
    for (const flagId of [theirFlag.id, null]) {
      for (const attempt of [
        () => access.list(caller.user, caller, flagId, PAGE),
        () => access.create(caller.user, caller, flagId, { role_id: role.id }),
        () => access.retrieve(caller.user, caller, flagId, 1),
        () => access.remove(caller.user, caller, flagId, 1),
      ]) {
        await expect(attempt()).rejects.toMatchObject(FLAG_NOT_FOUND);
      }
    }
  });

  it('refuses a role of another organization, and a role the flag already has', async () => {
    const owner = await seedProject(context.dataSource);
    const flag = await seedFlag(context.dataSource, owner, owner.user);
    const theirRole = await seedRole(context.dataSource, await seedProject(context.dataSource));
    for (const role_id of [theirRole.id, randomUUID(), 'not-a-uuid']) {
      await expect(access.create(owner.user, owner, flag.id, { role_id })).rejects.toMatchObject({
        status: 400,
        code: 'invalid_input',
        detail: 'Role does not exist.',
        attr: 'role_id',
      });
    }
    const role = await seedRole(context.dataSource, owner);
    await access.create(owner.user, owner, flag.id, { role_id: role.id });
    await expect(access.create(owner.user, owner, flag.id, { role_id: role.id })).rejects.toMatchObject({
      status: 400,
      code: 'unique',
      detail: 'The fields feature_flag, role must make a unique set.',
    });
    expect((await access.list(owner.user, owner, flag.id, PAGE)).count).toBe(1);
  });

  it('answers 404 for a link of another flag of the project', async () => {
    const owner = await seedProject(context.dataSource);
    const [flag, other] = [
      await seedFlag(context.dataSource, owner, owner.user),
      await seedFlag(context.dataSource, owner, owner.user),
    ];
    const link = await access.create(owner.user, owner, other.id, {
      role_id: (await seedRole(context.dataSource, owner)).id,
    });
    await expect(access.retrieve(owner.user, owner, flag.id, link.id)).rejects.toMatchObject({
      status: 404,
      detail: 'Not found.',
    });
    await expect(access.remove(owner.user, owner, flag.id, link.id)).rejects.toMatchObject({ status: 404 });
    expect((await access.retrieve(owner.user, owner, other.id, link.id)).id).toBe(link.id);
  });
});
