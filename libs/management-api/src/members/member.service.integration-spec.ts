import { MembershipLevel, OrganizationMembership, type PersonalApiKey, User } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access.decorator';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedMember, seedProject } from '../testing/fixtures.util';
import { MemberService } from './member.service';
import { MembersModule } from './members.module';

type Seeded = ResolvedOrganization & { user: User };

function callerOf({ user }: Seeded): AccessContext {
  return { user, apiKey: {} as PersonalApiKey };
}

describe('MemberService', () => {
  let context: FeatureTestContext;
  let members: MemberService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([MembersModule]);
    members = context.get(MemberService);
  });

  afterAll(() => context?.close());

  async function levelOf(member: Seeded): Promise<MembershipLevel> {
    const membership = await context.dataSource
      .getRepository(OrganizationMembership)
      .findOneByOrFail({ id: member.membership.id });
    return membership.level;
  }

  it("refuses a member editing someone else's level, whatever level they ask for", async () => {
    const owner = await seedProject(context.dataSource);
    const member = await seedMember(context.dataSource, owner);
    const other = await seedMember(context.dataSource, owner);

    await expect(
      members.update(callerOf(member), member, other.user.uuid, MembershipLevel.Member),
    ).rejects.toMatchObject({ status: 403, detail: 'You can only edit others if you are an admin.' });
  });

  it('lets an admin raise a member to admin but not to owner, and not change their own level', async () => {
    const owner = await seedProject(context.dataSource);
    const admin = await seedMember(context.dataSource, owner, MembershipLevel.Admin);
    const member = await seedMember(context.dataSource, owner);

    await expect(
      members.update(callerOf(admin), admin, member.user.uuid, MembershipLevel.Owner),
    ).rejects.toMatchObject({
      status: 403,
      detail: "You can only make another member owner if you're this organization's owner.",
    });
    await expect(members.update(callerOf(admin), admin, '@me', MembershipLevel.Member)).rejects.toMatchObject(
      {
        status: 403,
        detail: "You can't change your own access level.",
      },
    );
    expect(await levelOf(member)).toBe(MembershipLevel.Member);

    const raised = await members.update(callerOf(admin), admin, member.user.uuid, MembershipLevel.Admin);

    expect(raised.level).toBe(MembershipLevel.Admin);
    expect(await levelOf(member)).toBe(MembershipLevel.Admin);
  });

  it('refuses an admin editing or removing the owner', async () => {
    const owner = await seedProject(context.dataSource);
    const admin = await seedMember(context.dataSource, owner, MembershipLevel.Admin);

    await expect(members.remove(callerOf(admin), admin, owner.user.uuid)).rejects.toMatchObject({
      status: 403,
      detail: 'You can only edit others with level lower or equal to you.',
    });
    expect(await levelOf(owner)).toBe(MembershipLevel.Owner);
  });

  it('refuses the owner leaving the organization', async () => {
    const owner = await seedProject(context.dataSource);

    await expect(members.remove(callerOf(owner), owner, '@me')).rejects.toMatchObject({
      status: 400,
      detail: 'Cannot leave the organization as its owner!',
    });
    expect(await levelOf(owner)).toBe(MembershipLevel.Owner);
  });

  it("moves a removed member's @current to the organization they still belong to", async () => {
    const home = await seedProject(context.dataSource, undefined, 'Home');
    const visited = await seedProject(context.dataSource, undefined, 'Visited');
    const member = await seedMember(context.dataSource, visited, MembershipLevel.Member, home.user);
    await context.dataSource
      .getRepository(User)
      .update(
        { id: home.user.id },
        { currentOrganizationId: visited.organization.id, currentTeamId: visited.team.id },
      );

    await members.remove(callerOf(visited), visited, member.user.uuid);

    expect(
      await context.dataSource
        .getRepository(OrganizationMembership)
        .countBy({ organizationId: visited.organization.id, userId: home.user.id }),
    ).toBe(0);
    expect(await context.dataSource.getRepository(User).findOneByOrFail({ id: home.user.id })).toMatchObject({
      currentOrganizationId: home.organization.id,
      currentTeamId: home.team.id,
    });
  });

  it('answers 404 for a user of another organization, as for an unknown one', async () => {
    const owner = await seedProject(context.dataSource);
    const stranger = await seedProject(context.dataSource);

    await expect(members.remove(callerOf(owner), owner, stranger.user.uuid)).rejects.toMatchObject({
      status: 404,
    });
  });

  it('lists active members newest first, one by e-mail case-insensitively', async () => {
    const owner = await seedProject(context.dataSource);
    const member = await seedMember(context.dataSource, owner);
    const gone = await seedMember(context.dataSource, owner);
    await context.dataSource.getRepository(User).update({ id: gone.user.id }, { isActive: false });
    const page = { limit: 100, offset: 0 };

    const all = await members.list(owner, page, {});
    const byEmail = await members.list(owner, page, { email: member.user.email.toUpperCase() });

    expect(all.results.map((result) => result.user.uuid)).toEqual([member.user.uuid, owner.user.uuid]);
    expect(byEmail).toMatchObject({ count: 1, results: [{ id: member.membership.id }] });
  });
});
