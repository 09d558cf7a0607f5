import { MembershipLevel, OrganizationMembership, Team, User } from '@hogbase/postgres';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { callerOf } from '../testing/auth-fixtures.util';
import { seedMember, seedProject } from '../testing/fixtures.util';
import { ProjectService } from './project.service';
import { ProjectsModule } from './projects.module';

const PAGE = { limit: 100, offset: 0 };

describe('ProjectService', () => {
  let context: FeatureTestContext;
  let projects: ProjectService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([ProjectsModule]);
    projects = context.get(ProjectService);
  });

  afterAll(async () => {
    await context?.close();
  });

  const teams = () => context.dataSource.getRepository(Team);
  const users = () => context.dataSource.getRepository(User);

  it('creates a project in the organization with its own token, for admins only', async () => {
    const own = await seedProject(context.dataSource);
    const caller = await callerOf(context.dataSource, own.user);
    const created = await projects.create(caller, own, { name: 'Second', heatmaps_opt_in: true });
    expect(created).toMatchObject({
      name: 'Second',
      organization: own.organization.id,
      timezone: 'UTC',
      heatmaps_opt_in: true,
      effective_membership_level: MembershipLevel.Owner,
    });
    expect(created.api_token).toMatch(/^phc_/);
    expect(created.api_token).not.toBe(own.team.apiToken);

    const member = await seedMember(context.dataSource, own, MembershipLevel.Member);
    const before = await teams().countBy({ organizationId: own.organization.id });
    await expect(
      projects.create(await callerOf(context.dataSource, member.user), member, { name: 'Nope' }),
    ).rejects.toMatchObject({ status: 403, detail: 'Your organization access level is insufficient.' });
    expect(await teams().countBy({ organizationId: own.organization.id })).toBe(before);
  });

  it('refuses to create with a key whose projects are all in another organization', async () => {
    const own = await seedProject(context.dataSource);
    const elsewhere = await seedProject(context.dataSource, own.user);
    const caller = await callerOf(context.dataSource, own.user, { scopedTeams: [elsewhere.team.id] });
    await expect(projects.create(caller, own, { name: 'Nope' })).rejects.toMatchObject({
      status: 403,
      detail: `API key does not have access to the requested organization: ID ${own.organization.id}.`,
    });
  });

  it('answers 404 Organization not found to POST /api/projects/ once the current organization was left', async () => {
    const own = await seedProject(context.dataSource);
    await context.dataSource
      .getRepository(OrganizationMembership)
      .delete({ organizationId: own.organization.id, userId: own.user.id });
    const caller = await callerOf(context.dataSource, own.user);
    await expect(projects.createInCurrentOrganization(caller, { name: 'Nope' })).rejects.toMatchObject({
      status: 404,
      detail: 'Organization not found.',
    });
  });

  it('renames a project and keeps every setting the request leaves out', async () => {
    const own = await seedProject(context.dataSource);
    await projects.update(own, { heatmaps_opt_in: true, app_urls: ['https://a.example'] });
    const renamed = await projects.update(own, { name: 'Renamed' });
    expect(renamed).toMatchObject({
      name: 'Renamed',
      heatmaps_opt_in: true,
      app_urls: ['https://a.example'],
    });
    expect(await teams().findOneByOrFail({ id: own.team.id })).toMatchObject({
      name: 'Renamed',
      heatmapsOptIn: true,
    });
  });

  it('moves the users whose current project is deleted to the first project of their current organization', async () => {
    const own = await seedProject(context.dataSource);
    const caller = await callerOf(context.dataSource, own.user);
    const second = await projects.create(caller, own, { name: 'Second' });
    const member = await seedMember(context.dataSource, own, MembershipLevel.Member);
    await users().update(
      { id: member.user.id },
      { currentOrganizationId: own.organization.id, currentTeamId: second.id },
    );
    const team = await teams().findOneByOrFail({ id: second.id });
    await projects.remove({ ...own, team });
    expect(await teams().existsBy({ id: second.id })).toBe(false);
    expect((await users().findOneByOrFail({ id: member.user.id })).currentTeamId).toBe(own.team.id);
    // Users whose current project was another one keep it.
    expect((await users().findOneByOrFail({ id: own.user.id })).currentTeamId).toBe(own.team.id);
  });

  it("lists the projects of the caller's organizations, narrowed to the key's projects", async () => {
    const own = await seedProject(context.dataSource);
    const caller = await callerOf(context.dataSource, own.user);
    const second = await projects.create(caller, own, { name: 'Second' });
    const elsewhere = await seedProject(context.dataSource, own.user);
    await seedProject(context.dataSource);
    const all = await projects.list(caller, PAGE);
    expect(all.results.map((project) => project.id)).toEqual([own.team.id, second.id, elsewhere.team.id]);
    const narrowed = await projects.list(
      await callerOf(context.dataSource, own.user, { scopedTeams: [second.id] }),
      PAGE,
    );
    expect([narrowed.count, narrowed.results.map((project) => project.id)]).toEqual([1, [second.id]]);
    const inOrganization = await projects.list(caller, PAGE, elsewhere.organization.id);
    expect(inOrganization.results.map((project) => project.id)).toEqual([elsewhere.team.id]);
  });
});
