import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { InviteService } from '@hogbase/management-api';
import { MembershipLevel } from '@hogbase/postgres';
import { startSmtpTestServer, type SmtpTestServer } from '@hogbase/test-support';
import { startManagementTestApp, type ApiClient, type ManagementTestApp } from './management-test-app';
import { UUID_PATTERN as UUID } from '@hogbase/test-support';

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const FOUR_DAYS_MS = 4 * 24 * 60 * 60 * 1000;

function expectIsoTimestamp(value: unknown): void {
  expect(value).toEqual(expect.stringMatching(ISO_TIMESTAMP));
  expect(Number.isNaN(Date.parse(value as string))).toBe(false);
}

let emailCounter = 0;
/** A fresh address per call so that tests never trip over each other's invites. */
function freshEmail(prefix = 'invitee'): string {
  emailCounter += 1;
  return `${prefix}-${emailCounter}-${randomUUID().slice(0, 8)}@invites.test`;
}

describe('invites (/api/organizations/:organization_id/invites/)', () => {
  let smtp: SmtpTestServer;
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let organizationId: string;
  let ownerEmail: string;
  let ownerUserId: number;
  let ownerUuid: string;
  const organizationName = 'Invites Test Organization';

  const invitesPath = () => `/api/organizations/${organizationId}/invites/`;

  async function listInvites(client: ApiClient = api, orgId = organizationId) {
    const response = await client.get(`/api/organizations/${orgId}/invites/?limit=1000`);
    expect(response.status).toBe(200);
    return response.body.results as Array<Record<string, any>>;
  }

  async function createInvite(
    body: Record<string, unknown>,
    client: ApiClient = api,
    orgId = organizationId,
  ) {
    return client.post(`/api/organizations/${orgId}/invites/`, { send_email: false, ...body });
  }

  beforeAll(async () => {
    smtp = await startSmtpTestServer();
    testApp = await startManagementTestApp({
      smtp: { url: smtp.url, from: 'hogbase <noreply@hogbase.test>' },
    });
    ownerEmail = 'owner@invites-owner.test';
    const owner = await testApp.createOwner(ownerEmail, organizationName);
    api = owner.api;
    organizationId = owner.organizationId;
    ownerUserId = owner.user.id;
    ownerUuid = owner.user.uuid;
  });

  afterAll(async () => {
    await testApp?.close();
    await smtp?.stop();
  });

  describe('create', () => {
    it('answers 201 with every field of the Invite resource, typed as the spec says', async () => {
      const targetEmail = freshEmail();
      const response = await createInvite({
        target_email: targetEmail,
        first_name: 'Ada',
        level: MembershipLevel.Admin,
        message: 'Welcome aboard',
      });

      expect(response.status).toBe(201);
      const invite = response.body;
      expect(invite.id).toEqual(expect.stringMatching(UUID));
      expect(invite.target_email).toBe(targetEmail);
      expect(invite.first_name).toBe('Ada');
      expect(invite.emailing_attempt_made).toBe(false);
      expect(invite.level).toBe(8);
      expect(Number.isInteger(invite.level)).toBe(true);
      expect(invite.is_expired).toBe(false);
      expect(invite.message).toBe('Welcome aboard');
      expectIsoTimestamp(invite.created_at);
      expectIsoTimestamp(invite.updated_at);
      expect(Math.abs(Date.parse(invite.created_at) - Date.now())).toBeLessThan(60_000);

      const createdBy = invite.created_by;
      expect(createdBy).toEqual(
        expect.objectContaining({
          id: ownerUserId,
          uuid: ownerUuid,
          email: ownerEmail,
          distinct_id: expect.any(String),
          first_name: expect.any(String),
          last_name: expect.any(String),
          is_email_verified: expect.any(Boolean),
        }),
      );
      expect(Number.isInteger(createdBy.id)).toBe(true);
      expect(createdBy.uuid).toEqual(expect.stringMatching(UUID));
      // PostHog's UserBasic sends null when the user has no hedgehog configured.
      expect(createdBy.hedgehog_config === null || typeof createdBy.hedgehog_config === 'object').toBe(true);
    });

    it('defaults level to member, first_name to empty and message to null', async () => {
      const response = await createInvite({ target_email: freshEmail() });

      expect(response.status).toBe(201);
      expect(response.body.level).toBe(MembershipLevel.Member);
      expect(response.body.first_name).toBe('');
      expect(response.body.message).toBeNull();
    });

    it('ignores read-only fields sent by the client', async () => {
      const forgedId = randomUUID();
      const response = await createInvite({
        target_email: freshEmail(),
        id: forgedId,
        is_expired: true,
        emailing_attempt_made: true,
        created_at: '2001-01-01T00:00:00Z',
      });

      expect(response.status).toBe(201);
      expect(response.body.id).not.toBe(forgedId);
      expect(response.body.is_expired).toBe(false);
      expect(response.body.emailing_attempt_made).toBe(false);
      expect(response.body.created_at.startsWith('2001')).toBe(false);
    });

    it('lowercases the domain part of target_email and keeps the local part', async () => {
      const local = `Mixed.Case-${randomUUID().slice(0, 8)}`;
      const response = await createInvite({ target_email: `${local}@Invites.EXAMPLE.Test` });

      expect(response.status).toBe(201);
      expect(response.body.target_email).toBe(`${local}@invites.example.test`);
      const listed = await listInvites();
      expect(listed.find((invite) => invite.id === response.body.id)?.target_email).toBe(
        `${local}@invites.example.test`,
      );
    });

    it('answers 400 required on target_email when it is missing', async () => {
      const response = await createInvite({ first_name: 'Nobody' });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr: 'target_email',
      });
    });

    it.each([
      'not-an-email',
      'missing-domain@',
      '@missing-local.test',
      'two@@at.test',
      'space in@side.test',
      '',
    ])('answers 400 "Enter a valid email address." for target_email %j', async (targetEmail) => {
      const before = (await listInvites()).length;
      const response = await createInvite({ target_email: targetEmail });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Enter a valid email address.',
        attr: 'target_email',
      });
      expect(await listInvites()).toHaveLength(before);
    });

    it('answers 400 on first_name when it is longer than 30 characters', async () => {
      const response = await createInvite({ target_email: freshEmail(), first_name: 'x'.repeat(31) });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'max_length',
        detail: 'Ensure this field has no more than 30 characters.',
        attr: 'first_name',
      });
    });

    it('accepts a first_name of exactly 30 characters', async () => {
      const response = await createInvite({ target_email: freshEmail(), first_name: 'y'.repeat(30) });

      expect(response.status).toBe(201);
      expect(response.body.first_name).toBe('y'.repeat(30));
    });

    it.each([0, 2, 7, 16, 'admin'])('answers 400 on level for the invalid level %j', async (level) => {
      const response = await createInvite({ target_email: freshEmail(), level });

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ type: 'validation_error', attr: 'level' });
      expect(response.body.detail).toBe(`"${String(level)}" is not a valid choice.`);
    });

    it('answers 403 when an admin invites at owner level, and 201 at admin level', async () => {
      const admin = await testApp.createMember(freshEmail('admin'), organizationId, MembershipLevel.Admin);

      const tooHigh = await createInvite(
        { target_email: freshEmail(), level: MembershipLevel.Owner },
        admin.api,
      );
      expect(tooHigh.status).toBe(403);
      expect(tooHigh.body).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'You cannot invite a user with a higher permission level than your own.',
        attr: null,
      });

      const sameLevel = await createInvite(
        { target_email: freshEmail(), level: MembershipLevel.Admin },
        admin.api,
      );
      expect(sameLevel.status).toBe(201);
      expect(sameLevel.body.created_by.id).toBe(admin.user.id);
    });

    it('answers 403 when a member invites at admin level', async () => {
      const member = await testApp.createMember(freshEmail('member'), organizationId, MembershipLevel.Member);
      const targetEmail = freshEmail();

      const response = await createInvite(
        { target_email: targetEmail, level: MembershipLevel.Admin },
        member.api,
      );

      expect(response.status).toBe(403);
      expect(response.body.code).toBe('permission_denied');
      expect((await listInvites()).some((invite) => invite.target_email === targetEmail)).toBe(false);
    });

    it('answers 400 when the e-mail already belongs to a member of the organization', async () => {
      const memberEmail = freshEmail('existing-member');
      await testApp.createMember(memberEmail, organizationId, MembershipLevel.Member);

      const response = await createInvite({ target_email: memberEmail });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'A user with this email address already belongs to the organization.',
        attr: null,
      });
      expect((await listInvites()).some((invite) => invite.target_email === memberEmail)).toBe(false);
    });

    it('answers 400 when an active invite for the same e-mail already exists', async () => {
      const targetEmail = freshEmail('duplicate');
      const first = await createInvite({ target_email: targetEmail });
      expect(first.status).toBe(201);

      const second = await createInvite({ target_email: targetEmail });

      expect(second.status).toBe(400);
      expect(second.body).toMatchObject({ type: 'validation_error', attr: 'target_email' });
      expect(second.body.detail).toContain(targetEmail);
      expect((await listInvites()).filter((invite) => invite.target_email === targetEmail)).toHaveLength(1);
    });

    it('creates exactly one invite when the same e-mail is invited by several requests at once', async () => {
      const targetEmail = freshEmail('concurrent');

      const responses = await Promise.all(
        Array.from({ length: 6 }, () => createInvite({ target_email: targetEmail })),
      );

      expect(responses.map((response) => response.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);
      expect((await listInvites()).filter((invite) => invite.target_email === targetEmail)).toHaveLength(1);
    });

    it('creates no duplicate when bulk requests naming the same e-mails run at once', async () => {
      const shared = [freshEmail('bulk-race'), freshEmail('bulk-race')];

      const responses = await Promise.all(
        [0, 1, 2].map(() =>
          api.post(
            `${invitesPath()}bulk/`,
            [...shared].reverse().map((target_email) => ({ target_email, send_email: false })),
          ),
        ),
      );

      expect(responses.map((response) => response.status).sort()).toEqual([200, 400, 400]);
      const listed = await listInvites();
      for (const email of shared)
        expect(listed.filter((invite) => invite.target_email === email)).toHaveLength(1);
    });

    it('lets another organization invite an e-mail that has an active invite elsewhere', async () => {
      const targetEmail = freshEmail('two-orgs');
      expect((await createInvite({ target_email: targetEmail })).status).toBe(201);
      const other = await testApp.createOwner(freshEmail('other-owner'), 'Other invites organization');

      const response = await createInvite({ target_email: targetEmail }, other.api, other.organizationId);

      expect(response.status).toBe(201);
    });
  });

  describe('expiry', () => {
    it('shows is_expired true for an invite created more than 3 days ago, still listed', async () => {
      const targetEmail = freshEmail('expired');
      const created = await createInvite({ target_email: targetEmail });
      await testApp.dataSource.query(`UPDATE organization_invites SET created_at = $2 WHERE id = $1`, [
        created.body.id,
        new Date(Date.now() - FOUR_DAYS_MS),
      ]);

      const listed = (await listInvites()).find((invite) => invite.id === created.body.id);

      expect(listed).toBeDefined();
      expect(listed!.is_expired).toBe(true);
    });

    it('keeps is_expired false for an invite created 2 days ago', async () => {
      const created = await createInvite({ target_email: freshEmail('fresh') });
      await testApp.dataSource.query(`UPDATE organization_invites SET created_at = $2 WHERE id = $1`, [
        created.body.id,
        new Date(Date.now() - 2 * 24 * 60 * 60 * 1000),
      ]);

      const listed = (await listInvites()).find((invite) => invite.id === created.body.id);

      expect(listed!.is_expired).toBe(false);
    });

    it('lets a new invite through when the earlier one for that e-mail has expired', async () => {
      const targetEmail = freshEmail('reinvite');
      const first = await createInvite({ target_email: targetEmail });
      expect((await createInvite({ target_email: targetEmail })).status).toBe(400);
      await testApp.dataSource.query(`UPDATE organization_invites SET created_at = $2 WHERE id = $1`, [
        first.body.id,
        new Date(Date.now() - FOUR_DAYS_MS),
      ]);

      const second = await createInvite({ target_email: targetEmail });

      expect(second.status).toBe(201);
      expect(second.body.is_expired).toBe(false);
      expect(second.body.id).not.toBe(first.body.id);
    });
  });

  describe('list', () => {
    it('lists invites newest first in the pagination envelope with absolute links', async () => {
      const other = await testApp.createOwner(freshEmail('lister'), 'Listing organization');
      const orgInvites = `/api/organizations/${other.organizationId}/invites/`;
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        const response = await other.api.post(orgInvites, {
          target_email: freshEmail('listed'),
          send_email: false,
        });
        expect(response.status).toBe(201);
        ids.push(response.body.id);
      }

      const all = await other.api.get(orgInvites);
      expect(all.status).toBe(200);
      expect(all.body).toEqual({ count: 3, next: null, previous: null, results: expect.any(Array) });
      expect(all.body.results.map((invite: { id: string }) => invite.id)).toEqual([...ids].reverse());

      const firstPage = await other.api.get(`${orgInvites}?limit=2`);
      expect(firstPage.body.count).toBe(3);
      expect(firstPage.body.results.map((invite: { id: string }) => invite.id)).toEqual([ids[2], ids[1]]);
      expect(firstPage.body.previous).toBeNull();
      const next = new URL(firstPage.body.next);
      expect(next.origin).toBe(testApp.baseUrl);
      expect(next.pathname).toBe(orgInvites);
      expect(next.searchParams.get('limit')).toBe('2');
      expect(next.searchParams.get('offset')).toBe('2');

      const secondPage = await other.api.get(`${next.pathname}${next.search}`);
      expect(secondPage.body.results.map((invite: { id: string }) => invite.id)).toEqual([ids[0]]);
      expect(secondPage.body.next).toBeNull();
      expect(secondPage.body.previous).toEqual(expect.stringContaining(orgInvites));

      const pastTheEnd = await other.api.get(`${orgInvites}?offset=10`);
      expect(pastTheEnd.body).toMatchObject({ count: 3, next: null, results: [] });
    });

    it("does not show another organization's invites", async () => {
      const targetEmail = freshEmail('private');
      await createInvite({ target_email: targetEmail });
      const other = await testApp.createOwner(freshEmail('outsider'), 'Outsider organization');

      const response = await other.api.get(`/api/organizations/${other.organizationId}/invites/`);

      expect(
        response.body.results.some((invite: { target_email: string }) => invite.target_email === targetEmail),
      ).toBe(false);
    });

    it('answers 404 when listing the invites of an organization the caller is not a member of', async () => {
      const other = await testApp.createOwner(freshEmail('stranger'), 'Stranger organization');

      const response = await other.api.get(invitesPath());

      expect(response.status).toBe(404);
    });
  });

  describe('delete', () => {
    it('deletes an invite with 204 and no body, and it leaves the list', async () => {
      const created = await createInvite({ target_email: freshEmail('deleted') });

      const response = await api.delete(`${invitesPath()}${created.body.id}/`);

      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      expect((await listInvites()).some((invite) => invite.id === created.body.id)).toBe(false);
    });

    it.each([randomUUID(), 'not-a-uuid'])('answers 404 for the unknown invite id %s', async (id) => {
      const response = await api.delete(`${invitesPath()}${id}/`);

      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    });

    it("answers 404 for another organization's invite and leaves it in place", async () => {
      const created = await createInvite({ target_email: freshEmail('guarded') });
      const other = await testApp.createOwner(freshEmail('intruder'), 'Intruder organization');

      const throughOwnOrganization = await other.api.delete(
        `/api/organizations/${other.organizationId}/invites/${created.body.id}/`,
      );
      const throughVictimOrganization = await other.api.delete(`${invitesPath()}${created.body.id}/`);

      expect(throughOwnOrganization.status).toBe(404);
      expect(throughVictimOrganization.status).toBe(404);
      expect((await listInvites()).some((invite) => invite.id === created.body.id)).toBe(true);
    });

    it("refuses a member another member's invite (403, left in place), and lets the member delete its own", async () => {
      const member = await testApp.createMember(
        freshEmail('deleting-member'),
        organizationId,
        MembershipLevel.Member,
      );
      const ownersInvite = await createInvite({ target_email: freshEmail('owners-invitee') });

      const refused = await member.api.delete(`${invitesPath()}${ownersInvite.body.id}/`);

      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 403,
        body: {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: 'You do not have permission to perform this action.',
          attr: null,
        },
      });
      expect((await listInvites()).some((invite) => invite.id === ownersInvite.body.id)).toBe(true);

      const membersInvite = await createInvite({ target_email: freshEmail('members-invitee') }, member.api);
      expect(membersInvite.status).toBe(201);
      const own = await member.api.delete(`${invitesPath()}${membersInvite.body.id}/`);
      expect(own.status).toBe(204);
    });

    it('lets an admin delete an invite someone else sent', async () => {
      const admin = await testApp.createMember(
        freshEmail('deleting-admin'),
        organizationId,
        MembershipLevel.Admin,
      );
      const ownersInvite = await createInvite({ target_email: freshEmail('admin-deletes') });

      const response = await admin.api.delete(`${invitesPath()}${ownersInvite.body.id}/`);

      expect(response.status).toBe(204);
      expect((await listInvites()).some((invite) => invite.id === ownersInvite.body.id)).toBe(false);
    });
  });

  describe('bulk/', () => {
    const bulkPath = () => `${invitesPath()}bulk/`;

    it('creates every invite of a JSON array and answers with them in order', async () => {
      const emails = [freshEmail('bulk'), freshEmail('bulk'), freshEmail('bulk')];

      const response = await api.post(
        bulkPath(),
        emails.map((target_email, index) => ({ target_email, first_name: `B${index}`, send_email: false })),
      );

      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      expect(response.body.map((invite: { target_email: string }) => invite.target_email)).toEqual(emails);
      for (const invite of response.body) {
        expect(invite.id).toEqual(expect.stringMatching(UUID));
        expect(invite.is_expired).toBe(false);
        expect(invite.created_by.id).toBe(ownerUserId);
      }
      const listed = await listInvites();
      for (const email of emails) expect(listed.some((invite) => invite.target_email === email)).toBe(true);
    });

    it('accepts 20 invites in one request', async () => {
      const emails = Array.from({ length: 20 }, () => freshEmail('twenty'));

      const response = await api.post(
        bulkPath(),
        emails.map((target_email) => ({ target_email, send_email: false })),
      );

      expect(response.status).toBe(200);
      expect(response.body).toHaveLength(20);
    });

    it('answers 400 for 21 invites and creates none', async () => {
      const emails = Array.from({ length: 21 }, () => freshEmail('twentyone'));

      const response = await api.post(
        bulkPath(),
        emails.map((target_email) => ({ target_email, send_email: false })),
      );

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        type: 'validation_error',
        detail: 'A maximum of 20 invites can be sent in a single request.',
      });
      const listed = await listInvites();
      expect(listed.some((invite) => emails.includes(invite.target_email as string))).toBe(false);
    });

    it('creates none of the invites when one item is invalid', async () => {
      const emails = [freshEmail('atomic'), freshEmail('atomic')];

      const response = await api.post(bulkPath(), [
        { target_email: emails[0], send_email: false },
        { target_email: emails[1], send_email: false },
        { target_email: 'definitely not an e-mail', send_email: false },
      ]);

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ detail: 'Enter a valid email address.', attr: 'target_email' });
      const listed = await listInvites();
      expect(listed.some((invite) => emails.includes(invite.target_email as string))).toBe(false);
    });

    it('creates none of the invites when one item names an existing member', async () => {
      const memberEmail = freshEmail('bulk-member');
      await testApp.createMember(memberEmail, organizationId, MembershipLevel.Member);
      const fresh = freshEmail('atomic-member');

      const response = await api.post(bulkPath(), [
        { target_email: fresh, send_email: false },
        { target_email: memberEmail, send_email: false },
      ]);

      expect(response.status).toBe(400);
      expect(response.body.detail).toBe(
        'A user with this email address already belongs to the organization.',
      );
      expect((await listInvites()).some((invite) => invite.target_email === fresh)).toBe(false);
    });

    it('answers 200 with a single Invite when the body is one JSON object', async () => {
      const targetEmail = freshEmail('single');

      const response = await api.post(bulkPath(), { target_email: targetEmail, level: 8, send_email: false });

      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(false);
      expect(response.body).toMatchObject({ target_email: targetEmail, level: 8, is_expired: false });
      expect(response.body.id).toEqual(expect.stringMatching(UUID));
      expect((await listInvites()).some((invite) => invite.id === response.body.id)).toBe(true);
    });

    it('validates a single JSON object like create', async () => {
      const response = await api.post(bulkPath(), { target_email: 'nope' });

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ detail: 'Enter a valid email address.', attr: 'target_email' });
    });

    it('answers 400 for a body that is neither an array nor an object', async () => {
      const before = (await listInvites()).length;
      const response = await api.request('POST', bulkPath(), { rawBody: '"someone@invites.test"' });

      expect(response.status).toBe(400);
      expect(['validation_error', 'invalid_request']).toContain(response.body.type);
      expect(await listInvites()).toHaveLength(before);
    });
  });

  describe('e-mail', () => {
    it('mails the invite over SMTP to the invitee, naming the organization, the invite id and the accept command', async () => {
      const targetEmail = freshEmail('mailed');

      const response = await api.post(invitesPath(), { target_email: targetEmail, first_name: 'Grace' });

      expect(response.status).toBe(201);
      expect(response.body.emailing_attempt_made).toBe(true);
      const mail = await smtp.waitForMessage((message) => message.to.includes(targetEmail), 10_000);
      expect(mail.to).toEqual([targetEmail]);
      expect(mail.from).toBe('noreply@hogbase.test');
      expect(mail.subject).toContain(organizationName);
      expect(mail.text).toContain(response.body.id);
      expect(mail.text).toContain(`accept-invite --invite ${response.body.id} --email ${targetEmail}`);
    });

    it('mails every invite of a bulk request', async () => {
      const emails = [freshEmail('bulk-mailed'), freshEmail('bulk-mailed')];

      const response = await api.post(
        `${invitesPath()}bulk/`,
        emails.map((target_email) => ({ target_email })),
      );

      expect(response.status).toBe(200);
      for (const [index, email] of emails.entries()) {
        expect(response.body[index].emailing_attempt_made).toBe(true);
        const mail = await smtp.waitForMessage((message) => message.to.includes(email), 10_000);
        expect(mail.text).toContain(response.body[index].id);
      }
    });

    it('sends nothing and reports emailing_attempt_made false when send_email is false', async () => {
      const silentEmail = freshEmail('silent');
      const loudEmail = freshEmail('loud');

      const silent = await api.post(invitesPath(), { target_email: silentEmail, send_email: false });
      // A later mailed invite proves the server delivers; the silent one must not be among what arrived.
      const loud = await api.post(invitesPath(), { target_email: loudEmail });
      await smtp.waitForMessage((message) => message.to.includes(loudEmail), 10_000);

      expect(silent.status).toBe(201);
      expect(silent.body.emailing_attempt_made).toBe(false);
      expect(loud.body.emailing_attempt_made).toBe(true);
      expect(smtp.messages.some((message) => message.to.includes(silentEmail))).toBe(false);
    });

    describe('with an SMTP server that refuses connections', () => {
      let unreachableApp: ManagementTestApp;

      beforeAll(async () => {
        // A port that was just free: nothing listens there, so the connection is refused.
        const port = await new Promise<number>((resolve) => {
          const server = createServer().listen(0, '127.0.0.1', () => {
            const { port: freePort } = server.address() as AddressInfo;
            server.close(() => resolve(freePort));
          });
        });
        unreachableApp = await startManagementTestApp({
          smtp: { url: `smtp://127.0.0.1:${port}`, from: 'hogbase <noreply@hogbase.test>' },
        });
      });

      afterAll(async () => {
        await unreachableApp?.close();
      });

      it('still creates the invite (201) and reports that an attempt was made', async () => {
        const owner = await unreachableApp.createOwner(
          freshEmail('unreachable-owner'),
          'Unreachable SMTP organization',
        );
        const targetEmail = freshEmail('undelivered');

        const response = await owner.api.post(`/api/organizations/${owner.organizationId}/invites/`, {
          target_email: targetEmail,
        });

        expect(response.status).toBe(201);
        expect(response.body.emailing_attempt_made).toBe(true);
        const listed = await owner.api.get(`/api/organizations/${owner.organizationId}/invites/`);
        expect(listed.body.results.map((invite: { id: string }) => invite.id)).toEqual([response.body.id]);
      });
    });

    describe('without SMTP configured', () => {
      let plainApp: ManagementTestApp;

      beforeAll(async () => {
        plainApp = await startManagementTestApp({ smtp: undefined });
      });

      afterAll(async () => {
        await plainApp?.close();
      });

      it('creates the invite with emailing_attempt_made false and sends nothing', async () => {
        const owner = await plainApp.createOwner(freshEmail('plain-owner'), 'No SMTP organization');
        const targetEmail = freshEmail('unmailed');
        const before = smtp.messages.length;

        const response = await owner.api.post(`/api/organizations/${owner.organizationId}/invites/`, {
          target_email: targetEmail,
        });

        expect(response.status).toBe(201);
        expect(response.body.emailing_attempt_made).toBe(false);
        expect(smtp.messages.length).toBe(before);
      });
    });
  });

  describe('accepting (InviteService.accept)', () => {
    let invites: InviteService;

    beforeAll(() => {
      invites = testApp.app.get(InviteService);
    });

    async function members(): Promise<Array<Record<string, any>>> {
      const response = await api.get(`/api/organizations/${organizationId}/members/?limit=1000`);
      expect(response.status).toBe(200);
      return response.body.results;
    }

    it('turns the invite into a membership at its level and consumes the invite', async () => {
      const targetEmail = freshEmail('joiner');
      const created = await createInvite({
        target_email: targetEmail,
        level: MembershipLevel.Admin,
        first_name: 'Joan',
      });
      expect((await members()).some((member) => member.user.email === targetEmail)).toBe(false);

      const { user, membership } = await invites.accept(created.body.id, targetEmail);

      expect(membership.level).toBe(MembershipLevel.Admin);
      expect(membership.organizationId).toBe(organizationId);
      const member = (await members()).find((candidate) => candidate.user.email === targetEmail);
      expect(member).toBeDefined();
      expect(member!.level).toBe(MembershipLevel.Admin);
      expect(member!.user.uuid).toBe(user.uuid);
      expect(member!.user.first_name).toBe('Joan');
      expect((await listInvites()).some((invite) => invite.id === created.body.id)).toBe(false);
    });

    it('refuses a second use of a consumed invite', async () => {
      const targetEmail = freshEmail('twice');
      const created = await createInvite({ target_email: targetEmail });
      await invites.accept(created.body.id, targetEmail);

      await expect(invites.accept(created.body.id, targetEmail)).rejects.toMatchObject({ code: 'not_found' });
    });

    it('refuses an invite meant for another e-mail address and keeps it', async () => {
      const targetEmail = freshEmail('intended');
      const created = await createInvite({ target_email: targetEmail });

      await expect(invites.accept(created.body.id, freshEmail('impostor'))).rejects.toMatchObject({
        detail: 'This invite is intended for another email address.',
      });

      expect((await members()).some((member) => member.user.email === targetEmail)).toBe(false);
      expect((await listInvites()).some((invite) => invite.id === created.body.id)).toBe(true);
    });

    it('refuses an expired invite and creates no membership', async () => {
      const targetEmail = freshEmail('late');
      const created = await createInvite({ target_email: targetEmail });
      await testApp.dataSource.query(`UPDATE organization_invites SET created_at = $2 WHERE id = $1`, [
        created.body.id,
        new Date(Date.now() - FOUR_DAYS_MS),
      ]);

      await expect(invites.accept(created.body.id, targetEmail)).rejects.toMatchObject({
        detail: 'This invite has expired. Please ask your admin for a new one.',
      });

      expect((await members()).some((member) => member.user.email === targetEmail)).toBe(false);
    });

    it('refuses an unknown invite id', async () => {
      await expect(invites.accept(randomUUID(), freshEmail('ghost'))).rejects.toMatchObject({
        code: 'not_found',
      });
    });
  });
});
