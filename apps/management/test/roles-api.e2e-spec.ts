import { randomUUID } from 'node:crypto';
import { MembershipLevel, ResourceAccessLevel } from '@hogbase/postgres';
import { ApiClient, ManagementTestApp, startManagementTestApp, TestUser } from './management-test-app';

/** Roles, role memberships and role access to flags, with PostHog's edit rules (reference §8.1, §8.4). */
describe('roles and role access', () => {
  let testApp: ManagementTestApp;
  let owner: ApiClient;
  let organizationId: string;
  let projectId: number;
  let member: TestUser;
  let roles: string;
  let flags: string;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
    const created = await testApp.createOwner('owner@roles.test');
    ({ api: owner, organizationId, projectId } = created);
    member = await testApp.createMember('member@roles.test', organizationId, MembershipLevel.Member);
    roles = `/api/organizations/${organizationId}/roles/`;
    flags = `/api/projects/${projectId}/feature_flags/`;
  });

  afterAll(async () => {
    await testApp?.close();
  });

  async function createRole(name: string, level?: number) {
    const response = await owner.post(roles, {
      name,
      ...(level ? { feature_flags_access_level: level } : {}),
    });
    expect(response.status).toBe(201);
    return response.body as Record<string, any>;
  }

  async function join(roleId: string, user: TestUser) {
    const response = await owner.post(`${roles}${roleId}/role_memberships/`, { user_uuid: user.user.uuid });
    expect(response.status).toBe(201);
    return response.body as Record<string, any>;
  }

  describe('roles', () => {
    it('creates, lists, renames and deletes roles; the name is unique per organization, in any case', async () => {
      const role = await createRole('Engineers');
      expect(role).toEqual({
        id: expect.any(String),
        name: 'Engineers',
        feature_flags_access_level: 37,
        created_at: expect.any(String),
        created_by: expect.objectContaining({ email: 'owner@roles.test' }),
        members: [],
        associated_flags: [],
      });
      const duplicate = await owner.post(roles, { name: 'ENGINEERS' });
      expect(duplicate.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'There is already a role with this name.',
        attr: 'name',
      });
      const renamed = await owner.patch(`${roles}${role.id}/`, {
        name: 'Platform',
        feature_flags_access_level: 21,
      });
      expect([renamed.status, renamed.body.name, renamed.body.feature_flags_access_level]).toEqual([
        200,
        'Platform',
        21,
      ]);
      const list = await owner.get(roles);
      expect(list.body.results.map((item: { name: string }) => item.name)).toContain('Platform');
      const bad = await owner.patch(`${roles}${role.id}/`, { feature_flags_access_level: 30 });
      expect([bad.status, bad.body.code, bad.body.attr]).toEqual([
        400,
        'invalid_choice',
        'feature_flags_access_level',
      ]);
      expect((await owner.delete(`${roles}${role.id}/`)).status).toBe(204);
      expect((await owner.get(`${roles}${role.id}/`)).status).toBe(404);
    });

    it("starts a role at the organization's default level for flags", async () => {
      await testApp.dataSource.query(
        `INSERT INTO organization_resource_access (organization_id, resource, access_level) VALUES ($1, 'feature flags', 21)`,
        [organizationId],
      );
      try {
        expect((await createRole('Viewers')).feature_flags_access_level).toBe(21);
      } finally {
        await testApp.dataSource.query(
          `DELETE FROM organization_resource_access WHERE organization_id = $1`,
          [organizationId],
        );
      }
    });

    it('lets only admins write roles', async () => {
      const refused = await member.api.post(roles, { name: 'Mine' });
      expect([refused.status, refused.body.detail]).toEqual([403, 'You need to have admin level or higher.']);
      expect((await member.api.get(roles)).status).toBe(200);
    });

    it('adds members of the organization to a role, once, and removes them', async () => {
      const role = await createRole('Support');
      const membership = await join(role.id, member);
      expect(membership).toMatchObject({ role_id: role.id, user: { email: 'member@roles.test' } });
      const again = await owner.post(`${roles}${role.id}/role_memberships/`, { user_uuid: member.user.uuid });
      expect([again.status, again.body.detail]).toEqual([400, 'User is already part of the role.']);
      const outsider = await testApp.createOwner('outsider@roles.test');
      for (const uuid of [outsider.user.uuid, randomUUID(), 'nope']) {
        const response = await owner.post(`${roles}${role.id}/role_memberships/`, { user_uuid: uuid });
        expect([response.status, response.body.detail]).toEqual([400, 'User does not exist.']);
      }
      expect((await owner.get(`${roles}${role.id}/`)).body.members).toHaveLength(1);
      expect((await owner.get(`${roles}${role.id}/role_memberships/`)).body.count).toBe(1);
      expect((await owner.delete(`${roles}${role.id}/role_memberships/${membership.id}/`)).status).toBe(204);
      expect((await owner.get(`${roles}${role.id}/`)).body.members).toEqual([]);
    });

    it("answers 404 for another organization's roles", async () => {
      const other = await testApp.createOwner('other@roles.test');
      const theirs = await other.api.post(`/api/organizations/${other.organizationId}/roles/`, {
        name: 'Theirs',
      });
      expect((await owner.get(`${roles}${theirs.body.id}/`)).status).toBe(404);
      expect((await owner.get(`/api/organizations/${other.organizationId}/roles/`)).status).toBe(404);
    });
  });

  describe('role access and can_edit', () => {
    it('gives a view-only role edit rights on exactly the flags it was given', async () => {
      await testApp.dataSource.query(
        `INSERT INTO organization_resource_access (organization_id, resource, access_level) VALUES ($1, 'feature flags', $2)`,
        [organizationId, ResourceAccessLevel.CanOnlyView],
      );
      const viewers = await createRole('Flag viewers', ResourceAccessLevel.CanOnlyView);
      await join(viewers.id, member);
      const flag = (await owner.post(flags, { key: 'guarded' })).body;
      const other = (await owner.post(flags, { key: 'other-guarded' })).body;

      expect((await member.api.get(`${flags}${flag.id}/`)).body.can_edit).toBe(false);
      const before = await member.api.patch(`${flags}${flag.id}/`, { name: 'mine now' });
      expect([before.status, before.body.detail]).toEqual([
        403,
        "You don't have edit permissions for this feature flag.",
      ]);
      const selfGrant = await member.api.post(`${flags}${flag.id}/role_access/`, { role_id: viewers.id });
      expect([selfGrant.status, selfGrant.body.detail]).toEqual([
        403,
        "You can't edit roles for this feature flag.",
      ]);

      const access = await owner.post(`${flags}${flag.id}/role_access/`, { role_id: viewers.id });
      expect(access.status).toBe(201);
      expect(access.body).toEqual({
        id: expect.any(Number),
        feature_flag: expect.objectContaining({ id: flag.id, key: 'guarded' }),
        role: expect.objectContaining({ id: viewers.id, name: 'Flag viewers' }),
        role_id: viewers.id,
        added_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const duplicate = await owner.post(`${flags}${flag.id}/role_access/`, { role_id: viewers.id });
      expect([duplicate.status, duplicate.body.code]).toEqual([400, 'unique']);

      expect((await member.api.get(`${flags}${flag.id}/`)).body.can_edit).toBe(true);
      expect((await member.api.patch(`${flags}${flag.id}/`, { name: 'mine now' })).status).toBe(200);
      expect((await member.api.get(`${flags}${other.id}/`)).body.can_edit).toBe(false);
      expect((await owner.get(`${roles}${viewers.id}/`)).body.associated_flags).toEqual([
        { id: flag.id, key: 'guarded' },
      ]);

      const list = await member.api.get(`${flags}${flag.id}/role_access/`);
      expect([list.status, list.body.count]).toEqual([200, 1]);
      expect((await member.api.get(`${flags}${flag.id}/role_access/${access.body.id}/`)).body.role_id).toBe(
        viewers.id,
      );
      expect((await owner.delete(`${flags}${flag.id}/role_access/${access.body.id}/`)).status).toBe(204);
      expect((await member.api.get(`${flags}${flag.id}/`)).body.can_edit).toBe(false);

      // An "edit" role may manage role access, and the flag's creator always may.
      const editors = await createRole('Flag editors', ResourceAccessLevel.CanAlwaysEdit);
      await join(editors.id, member);
      expect((await member.api.post(`${flags}${flag.id}/role_access/`, { role_id: viewers.id })).status).toBe(
        201,
      );
      await testApp.dataSource.query(`DELETE FROM organization_resource_access WHERE organization_id = $1`, [
        organizationId,
      ]);
    });

    it('answers 404 for an unknown flag, and refuses a role of another organization', async () => {
      const response = await owner.get(`${flags}999999/role_access/`);
      expect([response.status, response.body.detail]).toEqual([404, 'Feature flag not found.']);
      const flag = (await owner.post(flags, { key: 'role-target' })).body;
      const other = await testApp.createOwner('other2@roles.test');
      const foreignRole = await other.api.post(`/api/organizations/${other.organizationId}/roles/`, {
        name: 'Foreign',
      });
      const refused = await owner.post(`${flags}${flag.id}/role_access/`, { role_id: foreignRole.body.id });
      expect([refused.status, refused.body.detail, refused.body.attr]).toEqual([
        400,
        'Role does not exist.',
        'role_id',
      ]);
      expect((await other.api.get(`${flags}${flag.id}/role_access/`)).status).toBe(404);
    });
  });
});
