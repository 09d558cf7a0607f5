import { randomUUID } from 'node:crypto';
import { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import { ManagementTestApp, startManagementTestApp, TestUser } from './management-test-app';
import { UUID_PATTERN as UUID, ISO_8601_PATTERN as ISO_8601 } from '@hogbase/test-support';
import { NOT_FOUND } from './expected-bodies';

function permissionDenied(detail: string) {
  return { type: 'authentication_error', code: 'permission_denied', detail, attr: null };
}

const OWN_LEVEL = permissionDenied("You can't change your own access level.");
const OWNER_ONLY = permissionDenied(
  "You can only make another member owner if you're this organization's owner.",
);
const ADMIN_ONLY = permissionDenied('You can only edit others if you are an admin.');
const ABOVE_YOU = permissionDenied('You can only edit others with level lower or equal to you.');
const OWNER_CANNOT_LEAVE = {
  type: 'validation_error',
  code: 'invalid_input',
  detail: 'Cannot leave the organization as its owner!',
  attr: null,
};

interface Organization {
  id: string;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  /** Another plain member, for member-on-member cases. */
  peer: TestUser;
}

describe('members', () => {
  let testApp: ManagementTestApp;
  let emailCounter = 0;
  const email = (label: string) => `${label}-${++emailCounter}@members.test`;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
  });

  afterAll(async () => {
    await testApp?.close();
  });

  /** A fresh organization with an owner, an admin and two plain members, joined in that order. */
  async function organization(): Promise<Organization> {
    const owner = await testApp.createOwner(email('owner'));
    const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);
    const member = await testApp.createMember(email('member'), owner.organizationId, MembershipLevel.Member);
    const peer = await testApp.createMember(email('peer'), owner.organizationId, MembershipLevel.Member);
    return { id: owner.organizationId, owner, admin, member, peer };
  }

  const membersPath = (organizationId: string, userUuid?: string) =>
    `/api/organizations/${organizationId}/members/${userUuid === undefined ? '' : `${userUuid}/`}`;

  async function levelOf(organizationId: string, user: TestUser): Promise<MembershipLevel | undefined> {
    const membership = await testApp.dataSource
      .getRepository(OrganizationMembership)
      .findOneBy({ organizationId, userId: user.user.id });
    return membership?.level;
  }

  describe('list', () => {
    it('lists the members newest first, with and without the trailing slash', async () => {
      const org = await organization();
      for (const path of [`/api/organizations/${org.id}/members/`, `/api/organizations/${org.id}/members`]) {
        const response = await org.member.api.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ count: 4, next: null, previous: null });
        expect(response.body.results.map((member: { user: { email: string } }) => member.user.email)).toEqual(
          [org.peer, org.member, org.admin, org.owner].map((user) => user.user.email),
        );
      }
    });

    it('returns each member with the fields and types of the interface', async () => {
      const org = await organization();
      const { body } = await org.owner.api.get(membersPath(org.id));
      const admin = body.results.find(
        (member: { user: { email: string } }) => member.user.email === org.admin.user.email,
      );

      expect(admin).toMatchObject({
        id: expect.stringMatching(UUID),
        level: MembershipLevel.Admin,
        joined_at: expect.stringMatching(ISO_8601),
        updated_at: expect.stringMatching(ISO_8601),
        is_2fa_enabled: false,
        has_social_auth: false,
        user: {
          id: org.admin.user.id,
          uuid: org.admin.user.uuid,
          distinct_id: expect.any(String),
          first_name: expect.any(String),
          last_name: expect.any(String),
          email: org.admin.user.email,
          is_email_verified: expect.any(Boolean),
        },
      });
      expect(Number.isInteger(admin.user.id)).toBe(true);
      expect(admin.user.uuid).toMatch(UUID);
      expect(admin.user.hedgehog_config === null || typeof admin.user.hedgehog_config === 'object').toBe(
        true,
      );
      expect(admin.id).not.toBe(admin.user.uuid);
    });

    it('filters by ?email=', async () => {
      const org = await organization();
      const response = await org.owner.api.get(
        `${membersPath(org.id)}?email=${encodeURIComponent(org.member.user.email)}`,
      );
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(1);
      expect(response.body.results.map((member: { user: { uuid: string } }) => member.user.uuid)).toEqual([
        org.member.user.uuid,
      ]);

      const nobody = await org.owner.api.get(`${membersPath(org.id)}?email=nobody%40members.test`);
      expect(nobody.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    });

    it('never lists a member of another organization, even by ?email=', async () => {
      const org = await organization();
      const other = await organization();
      const response = await org.owner.api.get(
        `${membersPath(org.id)}?email=${encodeURIComponent(other.member.user.email)}`,
      );
      expect(response.body.count).toBe(0);
    });

    it('leaves out deactivated users', async () => {
      const org = await organization();
      await testApp.dataSource.getRepository(User).update({ id: org.peer.user.id }, { isActive: false });
      const { body } = await org.owner.api.get(membersPath(org.id));
      expect(body.count).toBe(3);
      expect(JSON.stringify(body)).not.toContain(org.peer.user.email);
    });

    it('paginates with DRF links', async () => {
      const org = await organization();
      const first = await org.owner.api.get(`${membersPath(org.id)}?limit=3`);
      expect(first.body).toMatchObject({
        count: 4,
        previous: null,
        next: `${testApp.baseUrl}/api/organizations/${org.id}/members/?limit=3&offset=3`,
      });
      expect(first.body.results).toHaveLength(3);
      const second = await org.owner.api.get(`${membersPath(org.id)}?limit=3&offset=3`);
      expect(second.body).toMatchObject({
        count: 4,
        next: null,
        previous: `${testApp.baseUrl}/api/organizations/${org.id}/members/?limit=3`,
      });
      expect(second.body.results.map((member: { user: { uuid: string } }) => member.user.uuid)).toEqual([
        org.owner.user.uuid,
      ]);
    });

    it("answers 404 for another organization's member list, as for an unknown organization", async () => {
      const org = await organization();
      const other = await organization();
      for (const id of [other.id, randomUUID()]) {
        const response = await org.owner.api.get(membersPath(id));
        expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: NOT_FOUND });
      }
    });
  });

  describe('change level', () => {
    it('lets an admin promote a member to admin', async () => {
      const org = await organization();
      const response = await org.admin.api.patch(membersPath(org.id, org.member.user.uuid), {
        level: MembershipLevel.Admin,
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: expect.stringMatching(UUID),
        level: MembershipLevel.Admin,
        user: { uuid: org.member.user.uuid, email: org.member.user.email },
        joined_at: expect.stringMatching(ISO_8601),
        updated_at: expect.stringMatching(ISO_8601),
      });
      expect(await levelOf(org.id, org.member)).toBe(MembershipLevel.Admin);
      const listed = await org.owner.api.get(
        `${membersPath(org.id)}?email=${encodeURIComponent(org.member.user.email)}`,
      );
      expect(listed.body.results[0].level).toBe(MembershipLevel.Admin);
    });

    it('lets an admin demote another admin, an equal level', async () => {
      const org = await organization();
      const secondAdmin = await testApp.createMember(email('admin2'), org.id, MembershipLevel.Admin);
      const response = await org.admin.api.patch(membersPath(org.id, secondAdmin.user.uuid), {
        level: MembershipLevel.Member,
      });
      expect(response.status).toBe(200);
      expect(response.body.level).toBe(MembershipLevel.Member);
      expect(await levelOf(org.id, secondAdmin)).toBe(MembershipLevel.Member);
    });

    it('lets the owner make another member owner, leaving two owners', async () => {
      const org = await organization();
      const response = await org.owner.api.patch(membersPath(org.id, org.admin.user.uuid), {
        level: MembershipLevel.Owner,
      });
      expect(response.status).toBe(200);
      expect(response.body.level).toBe(MembershipLevel.Owner);
      expect(await levelOf(org.id, org.admin)).toBe(MembershipLevel.Owner);
      expect(await levelOf(org.id, org.owner)).toBe(MembershipLevel.Owner);

      // The new owner may promote a third one.
      const third = await org.admin.api.patch(membersPath(org.id, org.member.user.uuid), {
        level: MembershipLevel.Owner,
      });
      expect(third.status).toBe(200);
      const owners = (await org.owner.api.get(membersPath(org.id))).body.results.filter(
        (member: { level: MembershipLevel }) => member.level === MembershipLevel.Owner,
      );
      expect(owners).toHaveLength(3);
    });

    it('lets the owner demote an admin to member', async () => {
      const org = await organization();
      const response = await org.owner.api.patch(membersPath(org.id, org.admin.user.uuid), {
        level: MembershipLevel.Member,
      });
      expect(response.status).toBe(200);
      expect(await levelOf(org.id, org.admin)).toBe(MembershipLevel.Member);
    });

    it('reads a level sent as a string, as DRF does', async () => {
      const org = await organization();
      const response = await org.owner.api.patch(membersPath(org.id, org.member.user.uuid), { level: '8' });
      expect(response.status).toBe(200);
      expect(response.body.level).toBe(MembershipLevel.Admin);
    });

    it('answers 200 and changes nothing for a PATCH without level', async () => {
      const org = await organization();
      const response = await org.admin.api.patch(membersPath(org.id, org.member.user.uuid), {
        joined_at: '2000-01-01T00:00:00Z',
        id: randomUUID(),
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        level: MembershipLevel.Member,
        user: { uuid: org.member.user.uuid },
      });
      expect(response.body.joined_at.startsWith('2000')).toBe(false);
    });

    it.each<[string, (org: Organization) => [TestUser, string, number], ReturnType<typeof permissionDenied>]>(
      [
        [
          'an owner changes their own level',
          (org) => [org.owner, org.owner.user.uuid, MembershipLevel.Admin],
          OWN_LEVEL,
        ],
        [
          'an admin changes their own level through @me',
          (org) => [org.admin, '@me', MembershipLevel.Member],
          OWN_LEVEL,
        ],
        [
          'a member raises their own level',
          (org) => [org.member, org.member.user.uuid, MembershipLevel.Admin],
          OWN_LEVEL,
        ],
        [
          'an admin makes a member owner',
          (org) => [org.admin, org.member.user.uuid, MembershipLevel.Owner],
          OWNER_ONLY,
        ],
        [
          'an admin makes themselves owner',
          (org) => [org.admin, org.admin.user.uuid, MembershipLevel.Owner],
          OWN_LEVEL,
        ],
        // PostHog checks "may you edit this member at all" before the new level, so a member raising
        // someone above their own level hears the admin rule (PostHog's own test says so).
        [
          'a member raises another member above their own level',
          (org) => [org.member, org.peer.user.uuid, MembershipLevel.Admin],
          ADMIN_ONLY,
        ],
        [
          'a member changes another member to member',
          (org) => [org.member, org.peer.user.uuid, MembershipLevel.Member],
          ADMIN_ONLY,
        ],
        [
          'a member demotes an admin',
          (org) => [org.member, org.admin.user.uuid, MembershipLevel.Member],
          ADMIN_ONLY,
        ],
        [
          'an admin demotes the owner to admin',
          (org) => [org.admin, org.owner.user.uuid, MembershipLevel.Admin],
          ABOVE_YOU,
        ],
        [
          'an admin demotes the owner to member',
          (org) => [org.admin, org.owner.user.uuid, MembershipLevel.Member],
          ABOVE_YOU,
        ],
      ],
    )('answers 403 when %s, and changes nothing', async (_case, pick, expected) => {
      const org = await organization();
      const [caller, targetUuid, level] = pick(org);
      const before = (await org.owner.api.get(membersPath(org.id))).body.results;

      const response = await caller.api.patch(membersPath(org.id, targetUuid), { level });
      expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: expected });
      expect((await org.owner.api.get(membersPath(org.id))).body.results).toEqual(before);
    });

    it('answers 403 to a member PATCH without level on someone else, as PostHog checks the member first', async () => {
      const org = await organization();
      const response = await org.member.api.patch(membersPath(org.id, org.peer.user.uuid), {});
      expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: ADMIN_ONLY });
    });

    it.each<[string, unknown, { code: string; detail: string }]>([
      ['3', 3, { code: 'invalid_choice', detail: '"3" is not a valid choice.' }],
      ['0', 0, { code: 'invalid_choice', detail: '"0" is not a valid choice.' }],
      ['16', 16, { code: 'invalid_choice', detail: '"16" is not a valid choice.' }],
      ['"admin"', 'admin', { code: 'invalid_choice', detail: '"admin" is not a valid choice.' }],
      ['null', null, { code: 'null', detail: 'This field may not be null.' }],
    ])('answers 400 for level %s, and changes nothing', async (_case, level, expected) => {
      const org = await organization();
      const response = await org.owner.api.patch(membersPath(org.id, org.member.user.uuid), { level });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: { type: 'validation_error', ...expected, attr: 'level' },
      });
      expect(await levelOf(org.id, org.member)).toBe(MembershipLevel.Member);
    });

    it('answers 400 for a body that is a list', async () => {
      const org = await organization();
      const response = await org.owner.api.patch(membersPath(org.id, org.member.user.uuid), [{ level: 8 }]);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: {
          type: 'validation_error',
          code: 'invalid_input',
          detail: 'Invalid data. Expected a dictionary, but got list.',
          attr: null,
        },
      });
    });

    it("answers 404 for an unknown user, a malformed uuid and another organization's member alike", async () => {
      const org = await organization();
      const other = await organization();
      for (const uuid of [randomUUID(), 'not-a-uuid', other.member.user.uuid, other.owner.user.uuid]) {
        const response = await org.owner.api.patch(membersPath(org.id, uuid), {
          level: MembershipLevel.Member,
        });
        expect({ uuid, status: response.status, body: response.body }).toEqual({
          uuid,
          status: 404,
          body: NOT_FOUND,
        });
      }
      expect(await levelOf(other.id, other.owner)).toBe(MembershipLevel.Owner);
    });

    it('answers 404 to a PATCH in an organization the caller is not in', async () => {
      const org = await organization();
      const other = await organization();
      const response = await org.owner.api.patch(membersPath(other.id, other.member.user.uuid), {
        level: MembershipLevel.Admin,
      });
      expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: NOT_FOUND });
      expect(await levelOf(other.id, other.member)).toBe(MembershipLevel.Member);
    });
  });

  describe('remove', () => {
    it('lets an admin remove a member', async () => {
      const org = await organization();
      const response = await org.admin.api.delete(membersPath(org.id, org.member.user.uuid));
      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      expect(await levelOf(org.id, org.member)).toBeUndefined();
      expect((await org.owner.api.get(membersPath(org.id))).body.count).toBe(3);
      // The removed user can no longer see the organization.
      const lost = await org.member.api.get(`/api/organizations/${org.id}/`);
      expect({ status: lost.status, body: lost.body }).toEqual({ status: 404, body: NOT_FOUND });
    });

    it('lets an admin remove another admin, and the owner remove an admin', async () => {
      const org = await organization();
      const secondAdmin = await testApp.createMember(email('admin2'), org.id, MembershipLevel.Admin);
      expect((await org.admin.api.delete(membersPath(org.id, secondAdmin.user.uuid))).status).toBe(204);
      expect((await org.owner.api.delete(membersPath(org.id, org.admin.user.uuid))).status).toBe(204);
      expect((await org.owner.api.get(membersPath(org.id))).body.count).toBe(3);
    });

    it('answers 403 to a member removing someone else', async () => {
      const org = await organization();
      const response = await org.member.api.delete(membersPath(org.id, org.peer.user.uuid));
      expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: ADMIN_ONLY });
      expect(await levelOf(org.id, org.peer)).toBe(MembershipLevel.Member);
    });

    it('answers 403 to an admin removing the owner', async () => {
      const org = await organization();
      const response = await org.admin.api.delete(membersPath(org.id, org.owner.user.uuid));
      expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: ABOVE_YOU });
      expect(await levelOf(org.id, org.owner)).toBe(MembershipLevel.Owner);
    });

    it('lets a member leave, by uuid or @me', async () => {
      const org = await organization();
      expect((await org.member.api.delete(membersPath(org.id, org.member.user.uuid))).status).toBe(204);
      expect((await org.peer.api.delete(membersPath(org.id, '@me'))).status).toBe(204);
      expect(await levelOf(org.id, org.member)).toBeUndefined();
      expect(await levelOf(org.id, org.peer)).toBeUndefined();
    });

    it('lets an admin leave', async () => {
      const org = await organization();
      expect((await org.admin.api.delete(`/api/organizations/${org.id}/members/@me`)).status).toBe(204);
      expect(await levelOf(org.id, org.admin)).toBeUndefined();
    });

    it('answers 400 to the owner leaving, by uuid or @me', async () => {
      const org = await organization();
      for (const uuid of [org.owner.user.uuid, '@me']) {
        const response = await org.owner.api.delete(membersPath(org.id, uuid));
        expect({ status: response.status, body: response.body }).toEqual({
          status: 400,
          body: OWNER_CANNOT_LEAVE,
        });
      }
      expect(await levelOf(org.id, org.owner)).toBe(MembershipLevel.Owner);
    });

    it('answers 400 to an owner removing another owner', async () => {
      const org = await organization();
      expect(
        (
          await org.owner.api.patch(membersPath(org.id, org.admin.user.uuid), {
            level: MembershipLevel.Owner,
          })
        ).status,
      ).toBe(200);
      const response = await org.owner.api.delete(membersPath(org.id, org.admin.user.uuid));
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: OWNER_CANNOT_LEAVE,
      });
      expect(await levelOf(org.id, org.admin)).toBe(MembershipLevel.Owner);
    });

    it('moves the current organization of a user who left to one that remains, or to none', async () => {
      const org = await organization();
      const elsewhere = await testApp.createOwner(org.member.user.email, 'Elsewhere');
      // createOwner made Elsewhere current; point the member back at the organization they leave.
      await testApp.dataSource
        .getRepository(User)
        .update({ id: org.member.user.id }, { currentOrganizationId: org.id });

      expect((await org.member.api.delete(membersPath(org.id, '@me'))).status).toBe(204);
      const current = await org.member.api.get('/api/organizations/@current/');
      expect(current.status).toBe(200);
      expect(current.body.id).toBe(elsewhere.organizationId);
      expect((await org.member.api.get('/api/projects/@current/')).body.id).toBe(elsewhere.projectId);

      expect((await org.peer.api.delete(membersPath(org.id, '@me'))).status).toBe(204);
      const none = await org.peer.api.get('/api/organizations/@current/');
      expect(none.status).toBe(404);
    });

    it("answers 404 for an unknown user and another organization's member alike", async () => {
      const org = await organization();
      const other = await organization();
      for (const uuid of [randomUUID(), other.member.user.uuid, 'not-a-uuid']) {
        const response = await org.owner.api.delete(membersPath(org.id, uuid));
        expect({ uuid, status: response.status, body: response.body }).toEqual({
          uuid,
          status: 404,
          body: NOT_FOUND,
        });
      }
      expect(await levelOf(other.id, other.member)).toBe(MembershipLevel.Member);
    });

    it("answers 404 when removing from another organization's member list", async () => {
      const org = await organization();
      const other = await organization();
      const response = await org.owner.api.delete(membersPath(other.id, other.member.user.uuid));
      expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: NOT_FOUND });
      expect(await levelOf(other.id, other.member)).toBe(MembershipLevel.Member);
    });
  });
});
