import { randomUUID } from 'node:crypto';
import { MembershipLevel, ResourceAccessLevel, type User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedMember, seedProject, seedUser } from '../testing/fixtures.util';
import { setFlagsAccessLevel } from '../testing/role-fixtures.util';
import { RolesModule } from './roles.module';
import { RolesService } from './roles.service';

const PAGE = { limit: 100, offset: 0 };

describe('RolesService', () => {
  let context: FeatureTestContext;
  let roles: RolesService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([RolesModule]);
    roles = context.get(RolesService);
  });

  afterAll(async () => {
    await context?.close();
  });

  const newOrganization = () => seedProject(context.dataSource);

  describe('names', () => {
    it('refuses a name its organization already has, in any case, and lets another organization use it', async () => {
      const acme = await newOrganization();
      await roles.create(acme.user, acme, { name: 'Engineers' });
      await expect(roles.create(acme.user, acme, { name: 'ENGINEERS' })).rejects.toMatchObject({
        status: 400,
        code: 'unique',
        detail: 'There is already a role with this name.',
        attr: 'name',
      });
      const other = await newOrganization();
      await expect(roles.create(other.user, other, { name: 'Engineers' })).resolves.toMatchObject({
        name: 'Engineers',
      });
    });

    it('refuses a rename to a taken name and keeps the name the role had', async () => {
      const acme = await newOrganization();
      await roles.create(acme.user, acme, { name: 'One' });
      const two = await roles.create(acme.user, acme, { name: 'Two' });
      await expect(roles.update(acme, two.id, { name: 'one' })).rejects.toMatchObject({
        code: 'unique',
        attr: 'name',
      });
      expect((await roles.retrieve(acme, two.id)).name).toBe('Two');
      // Its own name in another case is not taken by anyone else.
      expect((await roles.update(acme, two.id, { name: 'TWO' })).name).toBe('TWO');
    });
  });

  it("starts a role at the organization's level for flags unless the create names one", async () => {
    const acme = await newOrganization();
    expect((await roles.create(acme.user, acme, { name: 'Default' })).feature_flags_access_level).toBe(
      ResourceAccessLevel.CanAlwaysEdit,
    );
    await setFlagsAccessLevel(context.dataSource, acme, ResourceAccessLevel.CanOnlyView);
    expect((await roles.create(acme.user, acme, { name: 'Viewers' })).feature_flags_access_level).toBe(
      ResourceAccessLevel.CanOnlyView,
    );
    const named = await roles.create(acme.user, acme, {
      name: 'Editors',
      feature_flags_access_level: ResourceAccessLevel.CanAlwaysEdit,
    });
    expect(named.feature_flags_access_level).toBe(ResourceAccessLevel.CanAlwaysEdit);
  });

  it('refuses every write of a member below admin before it looks the role up', async () => {
    const acme = await newOrganization();
    const role = await roles.create(acme.user, acme, { name: 'Readers' });
    const member = await seedMember(context.dataSource, acme, MembershipLevel.Member);
    const adminOnly = {
      status: 403,
      code: 'permission_denied',
      detail: 'You need to have admin level or higher.',
    };
    const unknown = randomUUID();
    for (const attempt of [
      () => roles.create(member.user, member, { name: 'Mine' }),
      () => roles.update(member, role.id, { name: 'Renamed' }),
      () => roles.update(member, unknown, { name: 'Renamed' }),
      () => roles.update(member, null, { name: 'Renamed' }),
      () => roles.remove(member, null),
      () => roles.addMember(member, unknown, { user_uuid: member.user.uuid }),
      () => roles.removeMember(member, role.id, null),
    ]) {
      await expect(attempt()).rejects.toMatchObject(adminOnly);
    }
    expect((await roles.retrieve(member, role.id)).name).toBe('Readers');
  });

  it("answers 404 for another organization's role and for an id the route could not read", async () => {
    const acme = await newOrganization();
    const role = await roles.create(acme.user, acme, { name: 'Private' });
    const other = await newOrganization();
    for (const attempt of [
      () => roles.retrieve(other, role.id),
      () => roles.update(other, role.id, { name: 'Taken over' }),
      () => roles.remove(other, role.id),
      () => roles.listMembers(other, role.id, PAGE),
      () => roles.retrieve(acme, null),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ status: 404, code: 'not_found' });
    }
    expect((await roles.retrieve(acme, role.id)).name).toBe('Private');
  });

  describe('members', () => {
    let acme: ResolvedProject & { user: User };

    beforeEach(async () => {
      acme = await newOrganization();
    });

    it('adds only members of the organization, and each once', async () => {
      const role = await roles.create(acme.user, acme, { name: 'Team' });
      const outsider = await seedUser(context.dataSource);
      for (const user_uuid of [outsider.uuid, 'not-a-uuid', randomUUID()]) {
        await expect(roles.addMember(acme, role.id, { user_uuid })).rejects.toMatchObject({
          status: 400,
          code: 'invalid_input',
          detail: 'User does not exist.',
          attr: 'user_uuid',
        });
      }
      const member = await seedMember(context.dataSource, acme);
      const added = await roles.addMember(acme, role.id, { user_uuid: member.user.uuid });
      expect([added.role_id, added.user?.uuid]).toEqual([role.id, member.user.uuid]);
      await expect(roles.addMember(acme, role.id, { user_uuid: member.user.uuid })).rejects.toMatchObject({
        status: 400,
        code: 'unique',
        detail: 'User is already part of the role.',
        attr: 'user_uuid',
      });
      expect((await roles.listMembers(acme, role.id, PAGE)).count).toBe(1);
    });

    it('removes a membership only through its own role, and only once', async () => {
      const first = await roles.create(acme.user, acme, { name: 'First' });
      const second = await roles.create(acme.user, acme, { name: 'Second' });
      const member = await seedMember(context.dataSource, acme);
      const membership = await roles.addMember(acme, first.id, { user_uuid: member.user.uuid });
      await expect(roles.removeMember(acme, second.id, membership.id)).rejects.toMatchObject({ status: 404 });
      expect((await roles.retrieve(acme, first.id)).members).toHaveLength(1);
      await roles.removeMember(acme, first.id, membership.id);
      expect((await roles.retrieve(acme, first.id)).members).toEqual([]);
      await expect(roles.removeMember(acme, first.id, membership.id)).rejects.toMatchObject({ status: 404 });
    });

    it("takes a deleted role's memberships with it", async () => {
      const role = await roles.create(acme.user, acme, { name: 'Temporary' });
      const member = await seedMember(context.dataSource, acme);
      await roles.addMember(acme, role.id, { user_uuid: member.user.uuid });
      await roles.remove(acme, role.id);
      await expect(roles.listMembers(acme, role.id, PAGE)).rejects.toMatchObject({ status: 404 });
      expect(
        await context.dataSource.query('SELECT 1 FROM role_memberships WHERE role_id = $1', [role.id]),
      ).toEqual([]);
    });
  });
});
