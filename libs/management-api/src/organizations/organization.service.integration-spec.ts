import {
  MembershipLevel,
  Organization,
  OrganizationMembership,
  type PersonalApiKey,
  Team,
  User,
} from '@hogbase/postgres';
import type { AccessContext } from '../auth/access.decorator';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedMember, seedProject, seedUser } from '../testing/fixtures.util';
import { OrganizationProvisioningService } from './organization-provisioning.service';
import { OrganizationService } from './organization.service';
import { OrganizationsModule } from './organizations.module';

const PAGE = { limit: 100, offset: 0 };

function callerOf(user: User, scope: Partial<PersonalApiKey> = {}): AccessContext {
  return { user, apiKey: { scopedOrganizations: null, scopedTeams: null, ...scope } as PersonalApiKey };
}

describe('OrganizationService', () => {
  let context: FeatureTestContext;
  let provisioning: OrganizationProvisioningService;
  let organizations: OrganizationService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([OrganizationsModule]);
    provisioning = context.get(OrganizationProvisioningService);
    organizations = context.get(OrganizationService);
  });

  afterAll(() => context?.close());

  it('makes the creator the owner of the new organization and of its first project, and their @current', async () => {
    const creator = await seedUser(context.dataSource);
    const { organization, team } = await provisioning.createOrganization(
      creator,
      { name: 'Founders' },
      'Web',
    );

    const membership = await context.dataSource
      .getRepository(OrganizationMembership)
      .findOneByOrFail({ organizationId: organization.id, userId: creator.id });
    expect(membership.level).toBe(MembershipLevel.Owner);
    expect(team).toMatchObject({ organizationId: organization.id, name: 'Web', timezone: 'UTC' });
    expect(await context.dataSource.getRepository(User).findOneByOrFail({ id: creator.id })).toMatchObject({
      currentOrganizationId: organization.id,
      currentTeamId: team.id,
    });
  });

  it('gives a second organization of the same name a slug of its own', async () => {
    const name = `Slug ${Date.now()}`;
    const first = await provisioning.createOrganization(await seedUser(context.dataSource), { name });
    const second = await provisioning.createOrganization(await seedUser(context.dataSource), { name });

    expect(first.organization.slug).toBe(`slug-${name.slice(5)}`);
    expect(second.organization.slug).toMatch(new RegExp(`^${first.organization.slug}-[a-z]{4}$`));
  });

  it('leaves nothing behind when the creation fails midway', async () => {
    const name = `Half-made ${Date.now()}`;
    // The membership's foreign key refuses a user that does not exist, after the organization's insert.
    const ghost = Object.assign(new User(), { id: 2 ** 31 - 1 });

    await expect(provisioning.createOrganization(ghost, { name })).rejects.toThrow();
    expect(await context.dataSource.getRepository(Organization).countBy({ name })).toBe(0);
  });

  it("points the members' @current at their remaining organization when one is deleted", async () => {
    const kept = await seedProject(context.dataSource, undefined, 'Kept');
    const doomed = await seedProject(context.dataSource, kept.user, 'Doomed');
    expect(kept.user.currentOrganizationId).toBe(doomed.organization.id);

    await organizations.remove(doomed);

    expect(await context.dataSource.getRepository(Team).countBy({ id: doomed.team.id })).toBe(0);
    expect(await context.dataSource.getRepository(User).findOneByOrFail({ id: kept.user.id })).toMatchObject({
      currentOrganizationId: kept.organization.id,
      currentTeamId: kept.team.id,
    });
  });

  it("lists, for a key scoped to a project, that project's organization with that project only", async () => {
    const first = await seedProject(context.dataSource, undefined, 'First');
    const second = await seedProject(context.dataSource, first.user, 'Second');
    const other = await provisioning.provisionProject(second.organization.id, 'Other');

    const all = await organizations.list(callerOf(first.user), PAGE);
    const scoped = await organizations.list(callerOf(first.user, { scopedTeams: [second.team.id] }), PAGE);

    expect(all.results.map((organization) => organization.id)).toEqual([
      first.organization.id,
      second.organization.id,
    ]);
    expect(all.results[1].teams.map((team) => team.id)).toEqual([second.team.id, other.id]);
    expect(scoped.count).toBe(1);
    expect(scoped.results[0]).toMatchObject({ id: second.organization.id, member_count: '1' });
    expect(scoped.results[0].teams.map((team) => team.id)).toEqual([second.team.id]);
  });

  it('counts only active members', async () => {
    const project = await seedProject(context.dataSource);
    const { user: inactive } = await seedMember(context.dataSource, project);
    await seedMember(context.dataSource, project, MembershipLevel.Admin);
    await context.dataSource.getRepository(User).update({ id: inactive.id }, { isActive: false });

    const answer = await organizations.retrieve(callerOf(project.user), project);

    expect(answer.member_count).toBe('2');
    expect(answer.membership_level).toBe(MembershipLevel.Owner);
  });
});
