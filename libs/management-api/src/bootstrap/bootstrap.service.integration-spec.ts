import { randomUUID } from 'node:crypto';
import { Organization, PersonalApiKey, Team } from '@hogbase/postgres';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedProject } from '../testing/fixtures.util';
import { BootstrapModule } from './bootstrap.module';
import { BootstrapService, MAX_PERSONAL_API_KEYS } from './bootstrap.service';

const address = () => `${randomUUID()}@operator.test`;

describe('BootstrapService', () => {
  let context: FeatureTestContext;
  let bootstrap: BootstrapService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([BootstrapModule]);
    bootstrap = context.get(BootstrapService);
  });

  afterAll(() => context?.close());

  it('reuses the organization and project of a second run and issues a new key', async () => {
    const email = address();
    const first = await bootstrap.bootstrap({ email, organizationName: 'Ops' });
    const second = await bootstrap.bootstrap({ email: email.toUpperCase(), organizationName: 'Ops' });
    const third = await bootstrap.bootstrap({ email, organizationName: 'Ops', projectName: 'Staging' });

    expect(second).toMatchObject({
      email,
      organization_id: first.organization_id,
      project_id: first.project_id,
      project_api_key: first.project_api_key,
    });
    expect(second.personal_api_key).not.toBe(first.personal_api_key);
    expect(third.organization_id).toBe(first.organization_id);
    expect(third.project_id).not.toBe(first.project_id);
    expect(
      await context.dataSource.getRepository(Team).countBy({ organizationId: first.organization_id }),
    ).toBe(2);
  });

  it('refuses a key scoped to an organization or project the user does not belong to', async () => {
    const { user } = await seedProject(context.dataSource);
    const stranger = await seedProject(context.dataSource);

    await expect(
      bootstrap.createPersonalApiKey({
        email: user.email,
        scopes: ['*'],
        scopedOrganizations: [stranger.organization.id],
      }),
    ).rejects.toMatchObject({ status: 400, attr: 'scoped_organizations' });
    await expect(
      bootstrap.createPersonalApiKey({ email: user.email, scopes: ['*'], scopedTeams: [stranger.team.id] }),
    ).rejects.toMatchObject({ status: 400, attr: 'scoped_teams' });
    await expect(
      bootstrap.createPersonalApiKey({ email: user.email, scopes: ['feature_flag:fly'] }),
    ).rejects.toMatchObject({ status: 400, attr: 'scopes' });
    expect(await context.dataSource.getRepository(PersonalApiKey).countBy({ userId: user.id })).toBe(0);
  });

  it(`issues at most ${MAX_PERSONAL_API_KEYS} keys to a user, and a revoked one makes room`, async () => {
    const { user, team } = await seedProject(context.dataSource);
    const keys: string[] = [];
    for (let index = 0; index < MAX_PERSONAL_API_KEYS; index += 1) {
      keys.push(
        await bootstrap.createPersonalApiKey({ email: user.email, scopes: ['*'], scopedTeams: [team.id] }),
      );
    }

    await expect(bootstrap.createPersonalApiKey({ email: user.email, scopes: ['*'] })).rejects.toMatchObject({
      status: 400,
    });
    expect(await bootstrap.revokePersonalApiKey(keys[0])).toBe(true);
    expect(await bootstrap.revokePersonalApiKey(keys[0])).toBe(false);
    await expect(bootstrap.createPersonalApiKey({ email: user.email, scopes: ['*'] })).resolves.toEqual(
      expect.any(String),
    );
  });

  it("sets an organization's plugins access level by name or number, and refuses others", async () => {
    const { organization } = await seedProject(context.dataSource);

    await expect(bootstrap.setPluginsAccessLevel(organization.id, 'ROOT')).resolves.toEqual({
      organization_id: organization.id,
      plugins_access_level: 9,
    });
    await expect(bootstrap.setPluginsAccessLevel(organization.id, '4')).rejects.toMatchObject({
      status: 400,
      attr: 'level',
    });
    await expect(bootstrap.setPluginsAccessLevel('not-an-id', '3')).rejects.toMatchObject({ status: 404 });
    expect(
      (await context.dataSource.getRepository(Organization).findOneByOrFail({ id: organization.id }))
        .pluginsAccessLevel,
    ).toBe(9);
  });
});
