import { randomUUID } from 'node:crypto';
import {
  MembershipLevel,
  OrganizationInvite,
  OrganizationMembership,
  type PersonalApiKey,
  User,
} from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access.decorator';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedMember, seedProject } from '../testing/fixtures.util';
import { InviteService } from './invite.service';
import { InvitesModule } from './invites.module';

type Seeded = ResolvedOrganization & { user: User };

function callerOf({ user }: Seeded): AccessContext {
  return { user, apiKey: {} as PersonalApiKey };
}

const address = () => `${randomUUID()}@invited.test`;
const FOUR_DAYS_AGO = () => new Date(Date.now() - 4 * 24 * 60 * 60 * 1000);

describe('InviteService', () => {
  let context: FeatureTestContext;
  let invites: InviteService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([InvitesModule]);
    invites = context.get(InviteService);
  });

  afterAll(() => context?.close());

  const invitesOf = (organizationId: string) =>
    context.dataSource.getRepository(OrganizationInvite).findBy({ organizationId });

  it('refuses a second invite for an address while the first is active, not once it expired', async () => {
    const owner = await seedProject(context.dataSource);
    const email = address();
    const first = await invites.create(callerOf(owner), owner, { target_email: email });

    await expect(
      invites.create(callerOf(owner), owner, { target_email: email.toUpperCase() }),
    ).rejects.toMatchObject({
      status: 400,
      attr: 'target_email',
      detail: `An invite intended for ${email} is already active in this organization.`,
    });

    await context.dataSource
      .getRepository(OrganizationInvite)
      .update({ id: first.id }, { createdAt: FOUR_DAYS_AGO() });
    await expect(invites.create(callerOf(owner), owner, { target_email: email })).resolves.toMatchObject({
      target_email: email,
      is_expired: false,
    });
  });

  it('refuses inviting a member, or at a level above the inviter', async () => {
    const owner = await seedProject(context.dataSource);
    const member = await seedMember(context.dataSource, owner);

    await expect(
      invites.create(callerOf(owner), owner, { target_email: member.user.email }),
    ).rejects.toMatchObject({
      status: 400,
      detail: 'A user with this email address already belongs to the organization.',
    });
    await expect(
      invites.create(callerOf(member), member, { target_email: address(), level: MembershipLevel.Admin }),
    ).rejects.toMatchObject({
      status: 403,
      detail: 'You cannot invite a user with a higher permission level than your own.',
    });
    expect(await invitesOf(owner.organization.id)).toEqual([]);
  });

  it('creates a bulk of invites all or none', async () => {
    const owner = await seedProject(context.dataSource);
    const member = await seedMember(context.dataSource, owner);

    await expect(
      invites.bulk(callerOf(owner), owner, [
        { target_email: address() },
        { target_email: member.user.email },
      ]),
    ).rejects.toMatchObject({ status: 400 });
    expect(await invitesOf(owner.organization.id)).toEqual([]);

    const created = await invites.bulk(callerOf(owner), owner, [
      { target_email: address() },
      { target_email: address() },
    ]);
    expect(created).toHaveLength(2);
    expect(await invitesOf(owner.organization.id)).toHaveLength(2);
  });

  it('lets a member delete the invites they sent, and only an admin the others', async () => {
    const owner = await seedProject(context.dataSource);
    const member = await seedMember(context.dataSource, owner);
    const mine = await invites.create(callerOf(member), member, { target_email: address() });
    const theirs = await invites.create(callerOf(owner), owner, { target_email: address() });

    await expect(invites.remove(member.user, member, theirs.id)).rejects.toMatchObject({ status: 403 });
    await invites.remove(member.user, member, mine.id);
    await expect(invites.remove(owner.user, owner, mine.id)).rejects.toMatchObject({ status: 404 });
    await invites.remove(owner.user, owner, theirs.id);
    expect(await invitesOf(owner.organization.id)).toEqual([]);
  });

  it("answers 404 for another organization's invite", async () => {
    const owner = await seedProject(context.dataSource);
    const stranger = await seedProject(context.dataSource);
    const invite = await invites.create(callerOf(stranger), stranger, { target_email: address() });

    await expect(invites.remove(owner.user, owner, invite.id)).rejects.toMatchObject({ status: 404 });
    expect(await invitesOf(stranger.organization.id)).toHaveLength(1);
  });

  it("accepting makes the invitee a member at the invite's level and consumes the address's invites", async () => {
    const owner = await seedProject(context.dataSource);
    const email = address();
    const expired = await invites.create(callerOf(owner), owner, { target_email: email });
    await context.dataSource
      .getRepository(OrganizationInvite)
      .update({ id: expired.id }, { createdAt: FOUR_DAYS_AGO() });
    const invite = await invites.create(callerOf(owner), owner, {
      target_email: email,
      level: MembershipLevel.Admin,
    });

    const { user, membership } = await invites.accept(invite.id, email.toUpperCase(), { firstName: 'Ada' });

    expect(membership).toMatchObject({ organizationId: owner.organization.id, level: MembershipLevel.Admin });
    expect(await context.dataSource.getRepository(User).findOneByOrFail({ id: user.id })).toMatchObject({
      email,
      firstName: 'Ada',
      currentOrganizationId: owner.organization.id,
      currentTeamId: owner.team.id,
    });
    expect(await invitesOf(owner.organization.id)).toEqual([]);
  });

  it('refuses accepting an expired invite, or one for another address, and changes nothing', async () => {
    const owner = await seedProject(context.dataSource);
    const email = address();
    const invite = await invites.create(callerOf(owner), owner, { target_email: email });

    await expect(invites.accept(invite.id, address())).rejects.toMatchObject({
      status: 400,
      attr: 'email',
      detail: 'This invite is intended for another email address.',
    });
    await context.dataSource
      .getRepository(OrganizationInvite)
      .update({ id: invite.id }, { createdAt: FOUR_DAYS_AGO() });
    await expect(invites.accept(invite.id, email)).rejects.toMatchObject({
      status: 400,
      detail: 'This invite has expired. Please ask your admin for a new one.',
    });
    expect(await context.dataSource.getRepository(User).countBy({ email })).toBe(0);
    expect(await invitesOf(owner.organization.id)).toHaveLength(1);
  });

  it('refuses accepting for someone who already is a member, creating nothing', async () => {
    const owner = await seedProject(context.dataSource);
    const member = await seedMember(context.dataSource, owner);
    const invite = await context.dataSource.getRepository(OrganizationInvite).save({
      id: randomUUID(),
      organizationId: owner.organization.id,
      targetEmail: member.user.email,
      level: MembershipLevel.Admin,
    });

    await expect(invites.accept(invite.id, member.user.email)).rejects.toMatchObject({
      code: 'user_already_member',
    });
    expect(
      await context.dataSource
        .getRepository(OrganizationMembership)
        .findOneByOrFail({ organizationId: owner.organization.id, userId: member.user.id }),
    ).toMatchObject({ level: MembershipLevel.Member });
    expect(await invitesOf(owner.organization.id)).toHaveLength(1);
  });
});
