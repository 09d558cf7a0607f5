import { randomUUID } from 'node:crypto';
import { MembershipLevel, ResourceAccessLevel } from '@hogbase/postgres';
import { UUID_PATTERN as UUID } from '@hogbase/test-support';
import {
  startManagementTestApp,
  type ApiClient,
  type ManagementTestApp,
  type TestUser,
} from './management-test-app';

/**
 * Rules of roles and flag role access (reference §8.1, §8.4) that roles-api.e2e-spec.ts does not
 * walk: admin-only writes on every role route, scopes, pagination, the 404s of role access, the
 * flag's creator, cascades and soft-deleted flags. Each test works in an organization of its own,
 * because the organization's level for flags changes what every member may do.
 */
describe('roles and flag role access: the rules around them', () => {
  let testApp: ManagementTestApp;
  let organizationCounter = 0;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
  });

  afterAll(async () => {
    await testApp?.close();
  });

  interface Organization {
    owner: TestUser & { organizationId: string; projectId: number };
    roles: string;
    flags: string;
    member(level?: MembershipLevel): Promise<TestUser>;
    createRole(name: string, level?: ResourceAccessLevel): Promise<Record<string, any>>;
    join(roleId: string, user: TestUser): Promise<Record<string, any>>;
    createFlag(key: string, client?: ApiClient): Promise<Record<string, any>>;
    setFlagLevel(level: ResourceAccessLevel): Promise<void>;
  }

  async function newOrganization(): Promise<Organization> {
    organizationCounter += 1;
    const domain = `org${organizationCounter}.roles-rules.test`;
    const owner = await testApp.createOwner(`owner@${domain}`);
    const roles = `/api/organizations/${owner.organizationId}/roles/`;
    const flags = `/api/projects/${owner.projectId}/feature_flags/`;
    let memberCounter = 0;
    return {
      owner,
      roles,
      flags,
      member: (level = MembershipLevel.Member) => {
        memberCounter += 1;
        return testApp.createMember(`member${memberCounter}@${domain}`, owner.organizationId, level);
      },
      async createRole(name, level) {
        const response = await owner.api.post(roles, {
          name,
          ...(level === undefined ? {} : { feature_flags_access_level: level }),
        });
        expect(response.status).toBe(201);
        return response.body as Record<string, any>;
      },
      async join(roleId, user) {
        const response = await owner.api.post(`${roles}${roleId}/role_memberships/`, {
          user_uuid: user.user.uuid,
        });
        expect(response.status).toBe(201);
        return response.body as Record<string, any>;
      },
      async createFlag(key, client = owner.api) {
        const response = await client.post(flags, {
          key,
          filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
        });
        expect(response.status).toBe(201);
        return response.body as Record<string, any>;
      },
      async setFlagLevel(level) {
        await testApp.dataSource.query(
          `INSERT INTO organization_resource_access (organization_id, resource, access_level)
           VALUES ($1, 'feature flags', $2)`,
          [owner.organizationId, level],
        );
      },
    };
  }

  describe('roles', () => {
    it('refuses every role write of a plain member with the admin message, and lets them read', async () => {
      const organization = await newOrganization();
      const role = await organization.createRole('Readers');
      const member = await organization.member();
      const membership = await organization.join(role.id, member);
      const adminOnly = { status: 403, detail: 'You need to have admin level or higher.' };
      const attempts = [
        member.api.post(organization.roles, { name: 'Mine' }),
        member.api.patch(`${organization.roles}${role.id}/`, { name: 'Renamed' }),
        member.api.delete(`${organization.roles}${role.id}/`),
        member.api.post(`${organization.roles}${role.id}/role_memberships/`, {
          user_uuid: organization.owner.user.uuid,
        }),
        member.api.delete(`${organization.roles}${role.id}/role_memberships/${membership.id}/`),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.body).toMatchObject({ type: 'authentication_error', code: 'permission_denied' });
        expect({ status: response.status, detail: response.body.detail }).toEqual(adminOnly);
      }
      const read = await member.api.get(`${organization.roles}${role.id}/`);
      expect([read.status, read.body.name, read.body.members]).toEqual([200, 'Readers', [membership]]);
      expect(
        (await member.api.get(`${organization.roles}${role.id}/role_memberships/`)).body.results,
      ).toEqual([membership]);
    });

    it('lets an admin who is not the owner write roles', async () => {
      const organization = await newOrganization();
      const admin = await organization.member(MembershipLevel.Admin);
      const created = await admin.api.post(organization.roles, { name: 'By an admin' });
      expect([created.status, created.body.created_by?.email]).toEqual([201, admin.user.email]);
      const renamed = await admin.api.patch(`${organization.roles}${created.body.id}/`, { name: 'Renamed' });
      expect([renamed.status, renamed.body.name]).toEqual([200, 'Renamed']);
      expect((await admin.api.delete(`${organization.roles}${created.body.id}/`)).status).toBe(204);
    });

    it('presents a role and its memberships with UUIDs, timestamps and the basic user', async () => {
      const organization = await newOrganization();
      const role = await organization.createRole('Shapes', ResourceAccessLevel.CanOnlyView);
      expect(role.id).toMatch(UUID);
      expect(role.feature_flags_access_level).toBe(21);
      expect(Number.isNaN(Date.parse(role.created_at))).toBe(false);
      const member = await organization.member();
      const membership = await organization.join(role.id, member);
      expect(membership).toEqual({
        id: expect.stringMatching(UUID),
        role_id: role.id,
        user: expect.objectContaining({ uuid: member.user.uuid, email: member.user.email }),
        joined_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect((await organization.owner.api.get(`${organization.roles}${role.id}/`)).body.members).toEqual([
        membership,
      ]);
    });

    it('keeps names unique in any case when renaming, but lets a role change the case of its own name', async () => {
      const organization = await newOrganization();
      await organization.createRole('Design');
      const other = await organization.createRole('Marketing');
      const clash = await organization.owner.api.patch(`${organization.roles}${other.id}/`, {
        name: 'dEsIgN',
      });
      expect([clash.status, clash.body.code, clash.body.detail, clash.body.attr]).toEqual([
        400,
        'unique',
        'There is already a role with this name.',
        'name',
      ]);
      const recased = await organization.owner.api.patch(`${organization.roles}${other.id}/`, {
        name: 'MARKETING',
      });
      expect([recased.status, recased.body.name]).toEqual([200, 'MARKETING']);
    });

    it('lets two organizations use the same role name', async () => {
      const first = await newOrganization();
      const second = await newOrganization();
      await first.createRole('Same name');
      await second.createRole('Same name');
    });

    it('validates the name and the access level', async () => {
      const organization = await newOrganization();
      const api = organization.owner.api;
      const missing = await api.post(organization.roles, {});
      expect([missing.status, missing.body.code, missing.body.attr]).toEqual([400, 'required', 'name']);
      const blank = await api.post(organization.roles, { name: '' });
      expect([blank.status, blank.body.code, blank.body.attr]).toEqual([400, 'blank', 'name']);
      const long = await api.post(organization.roles, { name: 'x'.repeat(201) });
      expect([long.status, long.body.code, long.body.attr]).toEqual([400, 'max_length', 'name']);
      for (const level of [0, 30, '37x', null]) {
        const response = await api.post(organization.roles, {
          name: 'Levels',
          feature_flags_access_level: level,
        });
        expect([response.status, response.body.attr]).toEqual([400, 'feature_flags_access_level']);
      }
      const chosen = await api.post(organization.roles, { name: 'Levels', feature_flags_access_level: 21 });
      expect([chosen.status, chosen.body.feature_flags_access_level]).toEqual([201, 21]);
    });

    it('uses the level given on create over the organization default', async () => {
      const organization = await newOrganization();
      await organization.setFlagLevel(ResourceAccessLevel.CanOnlyView);
      expect((await organization.createRole('Defaulted')).feature_flags_access_level).toBe(21);
      const explicit = await organization.createRole('Explicit', ResourceAccessLevel.CanAlwaysEdit);
      expect(explicit.feature_flags_access_level).toBe(37);
    });

    it('pages roles and memberships with the DRF envelope', async () => {
      const organization = await newOrganization();
      const first = await organization.createRole('First');
      await organization.createRole('Second');
      await organization.createRole('Third');
      const page = await organization.owner.api.get(`${organization.roles}?limit=2`);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ count: 3, previous: null });
      expect(page.body.results).toHaveLength(2);
      expect(page.body.next).toContain('offset=2');
      const last = await organization.owner.api.get(`${organization.roles}?limit=2&offset=2`);
      expect([last.body.results.length, last.body.next]).toEqual([1, null]);

      await organization.join(first.id, await organization.member());
      await organization.join(first.id, await organization.member());
      const members = await organization.owner.api.get(
        `${organization.roles}${first.id}/role_memberships/?limit=1`,
      );
      expect([members.body.count, members.body.results.length]).toEqual([2, 1]);
    });

    it('answers 404 for an unknown role and membership, and for a membership of another role', async () => {
      const organization = await newOrganization();
      const api = organization.owner.api;
      for (const id of [randomUUID(), 'not-a-uuid']) {
        expect((await api.get(`${organization.roles}${id}/`)).status).toBe(404);
        expect((await api.patch(`${organization.roles}${id}/`, { name: 'x' })).status).toBe(404);
        expect((await api.delete(`${organization.roles}${id}/`)).status).toBe(404);
        expect((await api.get(`${organization.roles}${id}/role_memberships/`)).status).toBe(404);
      }
      const first = await organization.createRole('One');
      const second = await organization.createRole('Two');
      const membership = await organization.join(first.id, await organization.member());
      expect(
        (await api.delete(`${organization.roles}${second.id}/role_memberships/${membership.id}/`)).status,
      ).toBe(404);
      expect(
        (await api.delete(`${organization.roles}${first.id}/role_memberships/${randomUUID()}/`)).status,
      ).toBe(404);
      expect((await api.get(`${organization.roles}${first.id}/`)).body.members).toHaveLength(1);
    });

    it('needs organization:read to read roles and organization:write to write them', async () => {
      const organization = await newOrganization();
      const role = await organization.createRole('Scoped');
      const email = organization.owner.user.email;
      const reader = testApp.client(`Bearer ${await testApp.createKey(email, ['organization:read'])}`);
      expect((await reader.get(organization.roles)).status).toBe(200);
      expect((await reader.get(`${organization.roles}${role.id}/role_memberships/`)).status).toBe(200);
      const refused = await reader.post(organization.roles, { name: 'Nope' });
      expect([refused.status, refused.body.detail]).toEqual([
        403,
        "API key missing required scope 'organization:write'",
      ]);
      const flagsOnly = testApp.client(`Bearer ${await testApp.createKey(email, ['feature_flag:write'])}`);
      expect((await flagsOnly.get(organization.roles)).body.detail).toBe(
        "API key missing required scope 'organization:read'",
      );
    });

    it("removes a deleted role's memberships and flag access, so its members lose what it gave", async () => {
      const organization = await newOrganization();
      await organization.setFlagLevel(ResourceAccessLevel.CanOnlyView);
      const role = await organization.createRole('Temporary', ResourceAccessLevel.CanOnlyView);
      const member = await organization.member();
      await organization.join(role.id, member);
      const flag = await organization.createFlag('temporary-access');
      const access = await organization.owner.api.post(`${organization.flags}${flag.id}/role_access/`, {
        role_id: role.id,
      });
      expect(access.status).toBe(201);
      expect((await member.api.get(`${organization.flags}${flag.id}/`)).body.can_edit).toBe(true);

      expect((await organization.owner.api.delete(`${organization.roles}${role.id}/`)).status).toBe(204);
      const list = await organization.owner.api.get(`${organization.flags}${flag.id}/role_access/`);
      expect([list.status, list.body.count, list.body.results]).toEqual([200, 0, []]);
      expect((await member.api.get(`${organization.flags}${flag.id}/`)).body.can_edit).toBe(false);
    });
  });

  describe('role access', () => {
    it('lists, retrieves and deletes the role access of one flag, with the full flag and role', async () => {
      const organization = await newOrganization();
      const api = organization.owner.api;
      const flag = await organization.createFlag('listed');
      const other = await organization.createFlag('not-listed');
      const first = await organization.createRole('First');
      const second = await organization.createRole('Second');
      const created = [];
      for (const role of [first, second]) {
        const response = await api.post(`${organization.flags}${flag.id}/role_access/`, { role_id: role.id });
        expect(response.status).toBe(201);
        created.push(response.body);
      }
      await api.post(`${organization.flags}${other.id}/role_access/`, { role_id: first.id });

      const list = await api.get(`${organization.flags}${flag.id}/role_access/`);
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ count: 2, next: null, previous: null });
      expect(list.body.results.map((item: { id: number }) => item.id)).toEqual(
        created.map((item) => item.id),
      );
      expect(list.body.results.map((item: { role_id: string }) => item.role_id)).toEqual([
        first.id,
        second.id,
      ]);
      const [row] = list.body.results;
      const fullFlag = (await api.get(`${organization.flags}${flag.id}/`)).body;
      expect(row.feature_flag).toEqual({ ...fullFlag, updated_at: row.feature_flag.updated_at });
      expect(row.role).toMatchObject({
        id: first.id,
        name: 'First',
        feature_flags_access_level: 37,
        members: [],
        associated_flags: expect.arrayContaining([
          { id: flag.id, key: 'listed' },
          { id: other.id, key: 'not-listed' },
        ]),
      });

      const paged = await api.get(`${organization.flags}${flag.id}/role_access/?limit=1&offset=1`);
      expect([paged.body.count, paged.body.results.map((item: { id: number }) => item.id)]).toEqual([
        2,
        [created[1].id],
      ]);

      const retrieved = await api.get(`${organization.flags}${flag.id}/role_access/${created[0].id}/`);
      expect([retrieved.status, retrieved.body]).toEqual([200, row]);
      // A role access row answers only under its own flag.
      expect((await api.get(`${organization.flags}${other.id}/role_access/${created[0].id}/`)).status).toBe(
        404,
      );
      expect(
        (await api.delete(`${organization.flags}${other.id}/role_access/${created[0].id}/`)).status,
      ).toBe(404);

      expect((await api.delete(`${organization.flags}${flag.id}/role_access/${created[0].id}/`)).status).toBe(
        204,
      );
      expect((await api.get(`${organization.flags}${flag.id}/role_access/${created[0].id}/`)).status).toBe(
        404,
      );
      expect((await api.delete(`${organization.flags}${flag.id}/role_access/${created[0].id}/`)).status).toBe(
        404,
      );
      expect((await api.get(`${organization.flags}${flag.id}/role_access/`)).body.count).toBe(1);
      expect((await api.get(`${organization.roles}${first.id}/`)).body.associated_flags).toEqual([
        { id: other.id, key: 'not-listed' },
      ]);
    });

    it("answers 404 'Feature flag not found.' on every route for a flag the project does not have", async () => {
      const organization = await newOrganization();
      const api = organization.owner.api;
      const role = await organization.createRole('Any');
      const elsewhere = await newOrganization();
      const theirFlag = await elsewhere.createFlag('their-flag');
      for (const flagId of ['999999', 'abc', String(theirFlag.id)]) {
        const base = `${organization.flags}${flagId}/role_access/`;
        for (const response of [
          await api.get(base),
          await api.post(base, { role_id: role.id }),
          await api.get(`${base}1/`),
          await api.delete(`${base}1/`),
        ]) {
          expect(response.status).toBe(404);
          expect(response.body).toEqual({
            type: 'invalid_request',
            code: 'not_found',
            detail: 'Feature flag not found.',
            attr: null,
          });
        }
      }
    });

    it("answers for another organization's project exactly as for a project that does not exist", async () => {
      const organization = await newOrganization();
      const flag = await organization.createFlag('private');
      const outsider = await newOrganization();
      const theirs = await outsider.owner.api.get(`${organization.flags}${flag.id}/role_access/`);
      const unknown = await outsider.owner.api.get(
        `/api/projects/99999999/feature_flags/${flag.id}/role_access/`,
      );
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual(unknown.body);
      const role = await outsider.createRole('Outsiders');
      const post = await outsider.owner.api.post(`${organization.flags}${flag.id}/role_access/`, {
        role_id: role.id,
      });
      expect([post.status, post.body]).toEqual([404, unknown.body]);
    });

    it('keeps the role access of a soft-deleted flag reachable, as PostHog looks flags up with deleted ones', async () => {
      const organization = await newOrganization();
      const flag = await organization.createFlag('soon-deleted');
      const role = await organization.createRole('Keepers');
      await organization.owner.api.post(`${organization.flags}${flag.id}/role_access/`, { role_id: role.id });
      const deleted = await organization.owner.api.patch(`${organization.flags}${flag.id}/`, {
        deleted: true,
      });
      expect(deleted.status).toBe(200);
      const list = await organization.owner.api.get(`${organization.flags}${flag.id}/role_access/`);
      expect([list.status, list.body.count, list.body.results[0].feature_flag.deleted]).toEqual([
        200,
        1,
        true,
      ]);
    });

    it('validates role_id: required, and a role of this organization', async () => {
      const organization = await newOrganization();
      const flag = await organization.createFlag('validated');
      const path = `${organization.flags}${flag.id}/role_access/`;
      const missing = await organization.owner.api.post(path, {});
      expect([missing.status, missing.body.code, missing.body.attr]).toEqual([400, 'required', 'role_id']);
      for (const roleId of [randomUUID(), 'not-a-uuid']) {
        const response = await organization.owner.api.post(path, { role_id: roleId });
        expect([response.status, response.body.detail, response.body.attr]).toEqual([
          400,
          'Role does not exist.',
          'role_id',
        ]);
      }
    });

    it('needs feature_flag:read to read role access and feature_flag:write to change it', async () => {
      const organization = await newOrganization();
      const flag = await organization.createFlag('scoped-access');
      const role = await organization.createRole('Scoped');
      const path = `${organization.flags}${flag.id}/role_access/`;
      const email = organization.owner.user.email;
      const reader = testApp.client(`Bearer ${await testApp.createKey(email, ['feature_flag:read'])}`);
      expect((await reader.get(path)).status).toBe(200);
      const refused = await reader.post(path, { role_id: role.id });
      expect([refused.status, refused.body.detail]).toEqual([
        403,
        "API key missing required scope 'feature_flag:write'",
      ]);
      const writer = testApp.client(`Bearer ${await testApp.createKey(email, ['feature_flag:write'])}`);
      const created = await writer.post(path, { role_id: role.id });
      expect(created.status).toBe(201);
      expect((await writer.delete(`${path}${created.body.id}/`)).status).toBe(204);
    });

    describe('who may change it when the organization lets members only view flags', () => {
      let organization: Organization;
      let viewers: Record<string, any>;

      beforeEach(async () => {
        organization = await newOrganization();
        await organization.setFlagLevel(ResourceAccessLevel.CanOnlyView);
        viewers = await organization.createRole('Viewers', ResourceAccessLevel.CanOnlyView);
      });

      it('refuses a member whose roles only view, and a member with no role, on create and delete', async () => {
        const flag = await organization.createFlag('owned-by-owner');
        const path = `${organization.flags}${flag.id}/role_access/`;
        const existing = await organization.owner.api.post(path, { role_id: viewers.id });
        const viewer = await organization.member();
        await organization.join(viewers.id, viewer);
        const roleless = await organization.member();
        for (const user of [viewer, roleless]) {
          for (const response of [
            await user.api.post(path, { role_id: viewers.id }),
            await user.api.delete(`${path}${existing.body.id}/`),
          ]) {
            expect(response.body).toEqual({
              type: 'authentication_error',
              code: 'permission_denied',
              detail: "You can't edit roles for this feature flag.",
              attr: null,
            });
            expect(response.status).toBe(403);
          }
          // Reading stays open to them.
          expect((await user.api.get(path)).body.count).toBe(1);
        }
      });

      it("lets the flag's creator manage its role access, and only that flag's", async () => {
        const creator = await organization.member();
        await organization.join(viewers.id, creator);
        const own = await organization.createFlag('created-by-member', creator.api);
        const ownPath = `${organization.flags}${own.id}/role_access/`;
        const created = await creator.api.post(ownPath, { role_id: viewers.id });
        expect(created.status).toBe(201);
        expect((await creator.api.delete(`${ownPath}${created.body.id}/`)).status).toBe(204);

        const notOwn = await organization.createFlag('created-by-owner');
        const refused = await creator.api.post(`${organization.flags}${notOwn.id}/role_access/`, {
          role_id: viewers.id,
        });
        expect([refused.status, refused.body.detail]).toEqual([
          403,
          "You can't edit roles for this feature flag.",
        ]);
      });

      it('lets a member with an "always edit" role, and an admin with no role', async () => {
        const flag = await organization.createFlag('open-to-editors');
        const path = `${organization.flags}${flag.id}/role_access/`;
        const editors = await organization.createRole('Editors', ResourceAccessLevel.CanAlwaysEdit);
        const editor = await organization.member();
        await organization.join(viewers.id, editor);
        await organization.join(editors.id, editor);
        const byEditor = await editor.api.post(path, { role_id: viewers.id });
        expect(byEditor.status).toBe(201);
        const admin = await organization.member(MembershipLevel.Admin);
        expect((await admin.api.delete(`${path}${byEditor.body.id}/`)).status).toBe(204);
      });

      it('gives a view-only member can_edit and the flag PATCH only while their role is linked to the flag', async () => {
        const flag = await organization.createFlag('linked-later');
        const viewer = await organization.member();
        await organization.join(viewers.id, viewer);
        const flagPath = `${organization.flags}${flag.id}/`;

        expect((await viewer.api.get(flagPath)).body.can_edit).toBe(false);
        const before = await viewer.api.patch(flagPath, { name: 'by the viewer' });
        expect([before.status, before.body.detail]).toEqual([
          403,
          "You don't have edit permissions for this feature flag.",
        ]);

        const access = await organization.owner.api.post(`${flagPath}role_access/`, { role_id: viewers.id });
        expect(access.status).toBe(201);
        // The caller's own can_edit shows in the embedded flag.
        expect(
          (await viewer.api.get(`${flagPath}role_access/${access.body.id}/`)).body.feature_flag.can_edit,
        ).toBe(true);
        expect((await viewer.api.get(flagPath)).body.can_edit).toBe(true);
        const after = await viewer.api.patch(flagPath, { name: 'by the viewer' });
        expect([after.status, after.body.name]).toEqual([200, 'by the viewer']);

        expect(
          (await organization.owner.api.delete(`${flagPath}role_access/${access.body.id}/`)).status,
        ).toBe(204);
        expect((await viewer.api.get(flagPath)).body.can_edit).toBe(false);
        expect((await viewer.api.patch(flagPath, { name: 'again' })).status).toBe(403);
      });

      it('gives the same rights through a role the member joins after the link was made', async () => {
        const flag = await organization.createFlag('joined-later');
        await organization.owner.api.post(`${organization.flags}${flag.id}/role_access/`, {
          role_id: viewers.id,
        });
        const viewer = await organization.member();
        expect((await viewer.api.get(`${organization.flags}${flag.id}/`)).body.can_edit).toBe(false);
        const membership = await organization.join(viewers.id, viewer);
        expect((await viewer.api.get(`${organization.flags}${flag.id}/`)).body.can_edit).toBe(true);
        await organization.owner.api.delete(
          `${organization.roles}${viewers.id}/role_memberships/${membership.id}/`,
        );
        expect((await viewer.api.get(`${organization.flags}${flag.id}/`)).body.can_edit).toBe(false);
      });
    });

    it('lets any member manage role access when the organization has no level for flags', async () => {
      const organization = await newOrganization();
      const flag = await organization.createFlag('open-org');
      const role = await organization.createRole('Viewers', ResourceAccessLevel.CanOnlyView);
      const member = await organization.member();
      await organization.join(role.id, member);
      const created = await member.api.post(`${organization.flags}${flag.id}/role_access/`, {
        role_id: role.id,
      });
      expect(created.status).toBe(201);
    });
  });
});
