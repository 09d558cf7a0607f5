import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { MembershipLevel, PersonalApiKey, User } from '@hogbase/postgres';
import { MembershipRepository } from '../members/membership.repository';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedPersonalApiKey } from '../testing/auth-fixtures.util';
import { seedMember, seedProject } from '../testing/fixtures.util';
import { ACCESS_RULE, type AccessRule, type AccessContext } from './access.decorator';
import { AccessGuard } from './access.guard';
import { AccessRepository } from './access.repository';
import { AuthModule } from './auth.module';
import { OrganizationAccessService } from './organization-access.service';
import { PersonalApiKeyRepository } from './personal-api-key.repository';

/** The route the guard is asked about: a handler whose access rule each test sets. */
class Routes {}
const handler = (): void => undefined;

describe('AccessGuard and personal API keys', () => {
  let context: FeatureTestContext;
  let guard: AccessGuard;

  beforeAll(async () => {
    context = await createFeatureTestingModule([AuthModule]);
    guard = new AccessGuard(
      new Reflector(),
      context.get(PersonalApiKeyRepository),
      context.get(AccessRepository),
      context.get(MembershipRepository),
      context.get(OrganizationAccessService),
    );
  });

  afterAll(async () => {
    await context?.close();
  });

  /** The guard's decision on a route with `rule`, called with `key` and these path parameters. */
  async function call(
    rule: AccessRule,
    key: string,
    params: Record<string, string>,
  ): Promise<AccessContext | undefined> {
    Reflect.defineMetadata(ACCESS_RULE, rule, handler);
    const request: {
      headers: Record<string, string>;
      params: Record<string, string>;
      access?: AccessContext;
    } = { headers: { authorization: `Bearer ${key}` }, params };
    const execution = new ExecutionContextHost([request, {}, () => undefined], Routes, handler);
    await guard.canActivate(execution);
    return request.access;
  }

  describe('personal API key resolution', () => {
    it('finds the key by the hash of its value, with its active user, and nothing for any other value', async () => {
      const { user } = await seedProject(context.dataSource);
      const { apiKey, value } = await seedPersonalApiKey(context.dataSource, user);
      await expect(guard.authenticate(value)).resolves.toMatchObject({
        apiKey: { id: apiKey.id },
        user: { id: user.id },
      });
      await expect(guard.authenticate(`${value}x`)).resolves.toBeUndefined();
      await expect(guard.authenticate(apiKey.secureValue)).resolves.toBeUndefined();
    });

    it('refuses the key of a deactivated user', async () => {
      const { user } = await seedProject(context.dataSource);
      const { value } = await seedPersonalApiKey(context.dataSource, user);
      await context.dataSource.getRepository(User).update({ id: user.id }, { isActive: false });
      await expect(guard.authenticate(value)).resolves.toBeUndefined();
    });

    it('writes last_used_at on first use and not again within the hour', async () => {
      const { user } = await seedProject(context.dataSource);
      const { apiKey, value } = await seedPersonalApiKey(context.dataSource, user);
      const stored = () =>
        context.dataSource.getRepository(PersonalApiKey).findOneByOrFail({ id: apiKey.id });
      await guard.authenticate(value);
      const first = (await stored()).lastUsedAt;
      expect(first).toBeInstanceOf(Date);
      await guard.authenticate(value);
      expect((await stored()).lastUsedAt).toEqual(first);
    });
  });

  describe('what a route names', () => {
    const PROJECT_RULE: AccessRule = { scope: 'project:read', projectParam: 'project_id' };
    const ORGANIZATION_RULE: AccessRule = {
      scope: 'organization:read',
      organizationParam: 'organization_id',
    };

    it("answers another organization's project exactly as a project that does not exist, whatever the key's projects", async () => {
      const own = await seedProject(context.dataSource);
      const other = await seedProject(context.dataSource);
      const toIt = await seedPersonalApiKey(context.dataSource, own.user, { scopedTeams: [other.team.id] });
      const toOwn = await seedPersonalApiKey(context.dataSource, own.user, { scopedTeams: [own.team.id] });
      const notFound = { status: 404, code: 'not_found', detail: 'Project not found.' };
      for (const { value } of [toIt, toOwn]) {
        for (const project_id of [String(other.team.id), '999999999', 'abc']) {
          await expect(call(PROJECT_RULE, value, { project_id })).rejects.toMatchObject(notFound);
        }
      }
    });

    it('answers another organization exactly as one that does not exist', async () => {
      const own = await seedProject(context.dataSource);
      const other = await seedProject(context.dataSource);
      const { value } = await seedPersonalApiKey(context.dataSource, own.user);
      const notFound = { status: 404, code: 'not_found', detail: 'Not found.' };
      await expect(
        call(ORGANIZATION_RULE, value, { organization_id: other.organization.id }),
      ).rejects.toMatchObject(notFound);
      await expect(
        call(ORGANIZATION_RULE, value, { organization_id: '00000000-0000-4000-8000-000000000000' }),
      ).rejects.toMatchObject(notFound);
    });

    it("resolves a member's project, and refuses with 403 what the key's projects do not reach", async () => {
      const own = await seedProject(context.dataSource);
      const member = await seedMember(context.dataSource, own, MembershipLevel.Member);
      const { value } = await seedPersonalApiKey(context.dataSource, member.user);
      await expect(call(PROJECT_RULE, value, { project_id: String(own.team.id) })).resolves.toMatchObject({
        team: { id: own.team.id },
        organization: { id: own.organization.id },
        membership: { level: MembershipLevel.Member },
      });
      const elsewhere = await seedProject(context.dataSource, member.user);
      const narrowed = await seedPersonalApiKey(context.dataSource, member.user, {
        scopedTeams: [elsewhere.team.id],
      });
      await expect(
        call(PROJECT_RULE, narrowed.value, { project_id: String(own.team.id) }),
      ).rejects.toMatchObject({
        status: 403,
        detail: `API key does not have access to the requested project: ID ${own.team.id}.`,
      });
      await expect(
        call(ORGANIZATION_RULE, narrowed.value, { organization_id: own.organization.id }),
      ).rejects.toMatchObject({
        status: 403,
        detail: `API key does not have access to the requested organization: ID ${own.organization.id}.`,
      });
    });

    it('refuses a member below the level the route asks, after resolving the project', async () => {
      const own = await seedProject(context.dataSource);
      const member = await seedMember(context.dataSource, own, MembershipLevel.Member);
      const { value } = await seedPersonalApiKey(context.dataSource, member.user);
      await expect(
        call({ ...PROJECT_RULE, level: MembershipLevel.Admin }, value, { project_id: String(own.team.id) }),
      ).rejects.toMatchObject({ status: 403, detail: 'Your organization access level is insufficient.' });
    });
  });
});
