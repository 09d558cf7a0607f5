import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { MembershipLevel } from '@hogbase/postgres';
import { startDnsTestServer, type DnsTestServer } from '@hogbase/test-support';
import {
  startManagementTestApp,
  type ApiClient,
  type ManagementTestApp,
  type TestUser,
} from './management-test-app';
import { UUID_PATTERN as UUID } from '@hogbase/test-support';
import { INSUFFICIENT_LEVEL } from './expected-bodies';

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const INVALID_DOMAIN = {
  type: 'validation_error',
  code: 'invalid_input',
  detail: 'Please enter a valid domain or subdomain name.',
  attr: 'domain',
};

let domainCounter = 0;
/** A domain no other test uses: domains are unique across the whole instance. */
function freshDomain(label = 'site'): string {
  domainCounter += 1;
  return `${label}-${domainCounter}-${randomUUID().slice(0, 8)}.example.com`;
}

describe('domains (/api/organizations/:organization_id/domains/)', () => {
  let dns: DnsTestServer;
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let organizationId: string;
  let member: TestUser;
  let admin: TestUser;

  const domainsPath = (orgId = organizationId) => `/api/organizations/${orgId}/domains/`;

  async function createDomain(
    domain: string,
    extra: Record<string, unknown> = {},
    client = api,
    orgId = organizationId,
  ) {
    const response = await client.post(domainsPath(orgId), { domain, ...extra });
    expect(response.status).toBe(201);
    return response.body as Record<string, any>;
  }

  beforeAll(async () => {
    dns = await startDnsTestServer();
    testApp = await startManagementTestApp({ dnsServers: [dns.address] });
    const owner = await testApp.createOwner('owner@domains.test', 'Domains organization');
    api = owner.api;
    organizationId = owner.organizationId;
    member = await testApp.createMember('member@domains.test', organizationId, MembershipLevel.Member);
    admin = await testApp.createMember('admin@domains.test', organizationId, MembershipLevel.Admin);
  });

  afterAll(async () => {
    await testApp?.close();
    await dns?.stop();
  });

  describe('create', () => {
    it('answers 201 with every field of the Domain resource, unverified, with a 43-character challenge', async () => {
      const domain = freshDomain();

      const response = await api.post(domainsPath(), { domain });

      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        domain,
        is_verified: false,
        verified_at: null,
        verification_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        jit_provisioning_enabled: false,
        sso_enforcement: '',
        has_saml: false,
        saml_entity_id: null,
        saml_acs_url: null,
        saml_x509_cert: null,
      });
    });

    it('gives every domain its own challenge', async () => {
      const first = await createDomain(freshDomain());
      const second = await createDomain(freshDomain());

      expect(first.verification_challenge).not.toBe(second.verification_challenge);
    });

    it('drops jit_provisioning_enabled and sso_enforcement on create', async () => {
      const created = await createDomain(freshDomain(), {
        jit_provisioning_enabled: true,
        sso_enforcement: 'google-oauth2',
      });

      expect(created.jit_provisioning_enabled).toBe(false);
      expect(created.sso_enforcement).toBe('');
      const fetched = await api.get(`${domainsPath()}${created.id}/`);
      expect(fetched.body.jit_provisioning_enabled).toBe(false);
      expect(fetched.body.sso_enforcement).toBe('');
    });

    it('ignores read-only fields sent by the client', async () => {
      const created = await createDomain(freshDomain(), {
        is_verified: true,
        verified_at: '2020-01-01T00:00:00Z',
        verification_challenge: 'chosen-by-the-client',
        has_saml: true,
      });

      expect(created.is_verified).toBe(false);
      expect(created.verified_at).toBeNull();
      expect(created.verification_challenge).not.toBe('chosen-by-the-client');
      expect(created.has_saml).toBe(false);
    });

    it.each(['posthog.com', 'sub.domain.example.org', 'my-site.co', 'a1.b2.io'])(
      'accepts the domain %s',
      async (domain) => {
        // Made unique by a random first label so other test runs on the same instance cannot collide.
        const unique = `x${randomUUID().slice(0, 8)}.${domain}`;

        const response = await api.post(domainsPath(), { domain: unique });

        expect(response.status).toBe(201);
        expect(response.body.domain).toBe(unique);
      },
    );

    it.each([
      'test@posthog.com',
      '🦔.com',
      'one.two.c',
      '--alpha.com',
      'Example.com',
      'localhost',
      'http://example.com',
      'ends-with-dash-.com',
      ' spaced.com',
    ])('answers 400 "Please enter a valid domain or subdomain name." for %j', async (domain) => {
      const response = await api.post(domainsPath(), { domain });

      expect(response.status).toBe(400);
      expect(response.body).toEqual(INVALID_DOMAIN);
    });

    it('answers 400 required on domain when it is missing', async () => {
      const response = await api.post(domainsPath(), { saml_entity_id: 'x' });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr: 'domain',
      });
    });

    it('answers 400 unique when the domain already belongs to this organization', async () => {
      const domain = freshDomain('twice');
      await createDomain(domain);

      const response = await api.post(domainsPath(), { domain });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'domain with this domain already exists.',
        attr: 'domain',
      });
    });

    it('answers 400 unique when the domain belongs to another organization', async () => {
      const domain = freshDomain('taken');
      await createDomain(domain);
      const other = await testApp.createOwner(
        `other-${randomUUID()}@domains.test`,
        'Other domains organization',
      );

      const response = await other.api.post(domainsPath(other.organizationId), { domain });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'domain with this domain already exists.',
        attr: 'domain',
      });
      const otherList = await other.api.get(domainsPath(other.organizationId));
      expect(otherList.body.count).toBe(0);
    });

    it('lets an admin create a domain', async () => {
      const response = await admin.api.post(domainsPath(), { domain: freshDomain('by-admin') });

      expect(response.status).toBe(201);
    });
  });

  describe('read', () => {
    it('lists the domains ordered by domain in the pagination envelope', async () => {
      const other = await testApp.createOwner(
        `lister-${randomUUID()}@domains.test`,
        'Listing domains organization',
      );
      const suffix = randomUUID().slice(0, 8);
      const names = [`charlie-${suffix}.com`, `alpha-${suffix}.com`, `bravo-${suffix}.com`];
      for (const name of names) await createDomain(name, {}, other.api, other.organizationId);

      const all = await other.api.get(domainsPath(other.organizationId));
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ count: 3, next: null, previous: null });
      expect(all.body.results.map((domain: { domain: string }) => domain.domain)).toEqual([...names].sort());

      const firstPage = await other.api.get(`${domainsPath(other.organizationId)}?limit=2`);
      expect(firstPage.body.results.map((domain: { domain: string }) => domain.domain)).toEqual(
        [...names].sort().slice(0, 2),
      );
      const next = new URL(firstPage.body.next);
      expect(next.origin).toBe(testApp.baseUrl);
      expect(next.searchParams.get('offset')).toBe('2');
      const secondPage = await other.api.get(`${next.pathname}${next.search}`);
      expect(secondPage.body.results.map((domain: { domain: string }) => domain.domain)).toEqual([
        [...names].sort()[2],
      ]);
    });

    it('retrieves one domain with 200', async () => {
      const created = await createDomain(freshDomain());

      const response = await api.get(`${domainsPath()}${created.id}/`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual(created);
    });

    it('lets a member list and retrieve domains', async () => {
      const created = await createDomain(freshDomain('readable'));

      const list = await member.api.get(domainsPath());
      const retrieve = await member.api.get(`${domainsPath()}${created.id}/`);

      expect(list.status).toBe(200);
      expect(list.body.results.some((domain: { id: string }) => domain.id === created.id)).toBe(true);
      expect(retrieve.status).toBe(200);
      expect(retrieve.body.id).toBe(created.id);
    });

    it.each([randomUUID(), 'not-a-uuid'])('answers 404 for the unknown domain id %s', async (id) => {
      const response = await api.get(`${domainsPath()}${id}/`);

      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    });

    it("answers 404 for another organization's domain", async () => {
      const created = await createDomain(freshDomain('hidden'));
      const other = await testApp.createOwner(`peeker-${randomUUID()}@domains.test`, 'Peeking organization');

      const throughOwnOrganization = await other.api.get(
        `${domainsPath(other.organizationId)}${created.id}/`,
      );
      const throughVictimOrganization = await other.api.get(`${domainsPath()}${created.id}/`);

      expect(throughOwnOrganization.status).toBe(404);
      expect(throughVictimOrganization.status).toBe(404);
    });
  });

  describe('admin rules', () => {
    it('answers 403 to a member creating a domain, and creates nothing', async () => {
      const domain = freshDomain('by-member');

      const response = await member.api.post(domainsPath(), { domain });

      expect(response.status).toBe(403);
      expect(response.body).toEqual(INSUFFICIENT_LEVEL);
      const list = await api.get(`${domainsPath()}?limit=1000`);
      expect(list.body.results.some((entry: { domain: string }) => entry.domain === domain)).toBe(false);
    });

    it('answers 403 to a member updating a domain, and changes nothing', async () => {
      const created = await createDomain(freshDomain());

      const response = await member.api.patch(`${domainsPath()}${created.id}/`, {
        saml_entity_id: 'member-was-here',
      });

      expect(response.status).toBe(403);
      expect(response.body).toEqual(INSUFFICIENT_LEVEL);
      expect((await api.get(`${domainsPath()}${created.id}/`)).body.saml_entity_id).toBeNull();
    });

    it('answers 403 to a member deleting a domain, and keeps it', async () => {
      const created = await createDomain(freshDomain());

      const response = await member.api.delete(`${domainsPath()}${created.id}/`);

      expect(response.status).toBe(403);
      expect(response.body).toEqual(INSUFFICIENT_LEVEL);
      expect((await api.get(`${domainsPath()}${created.id}/`)).status).toBe(200);
    });

    it('answers 403 to a member verifying a domain', async () => {
      const created = await createDomain(freshDomain());
      dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);

      const response = await member.api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.status).toBe(403);
      expect(response.body).toEqual(INSUFFICIENT_LEVEL);
      expect((await api.get(`${domainsPath()}${created.id}/`)).body.is_verified).toBe(false);
    });
  });

  describe('update', () => {
    it('updates the SAML fields of an unverified domain', async () => {
      const created = await createDomain(freshDomain());

      const response = await api.patch(`${domainsPath()}${created.id}/`, {
        saml_entity_id: 'https://idp.example.com/entity',
        saml_acs_url: 'https://idp.example.com/acs',
      });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        saml_entity_id: 'https://idp.example.com/entity',
        saml_acs_url: 'https://idp.example.com/acs',
        saml_x509_cert: null,
        has_saml: false,
      });
    });

    it.each([
      ['jit_provisioning_enabled', true],
      ['jit_provisioning_enabled', false],
      ['sso_enforcement', 'google-oauth2'],
    ])('answers 400 verification_required when %s is sent for an unverified domain', async (field, value) => {
      const created = await createDomain(freshDomain());

      const response = await api.patch(`${domainsPath()}${created.id}/`, { [field]: value });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'verification_required',
        detail: 'This attribute cannot be updated until the domain is verified.',
        attr: field,
      });
      const fetched = await api.get(`${domainsPath()}${created.id}/`);
      expect(fetched.body.jit_provisioning_enabled).toBe(false);
      expect(fetched.body.sso_enforcement).toBe('');
    });

    it('sets has_saml only when entity id, ACS URL and certificate are all present', async () => {
      const created = await createDomain(freshDomain('saml'));
      const path = `${domainsPath()}${created.id}/`;

      const entityOnly = await api.patch(path, { saml_entity_id: 'entity' });
      expect(entityOnly.body.has_saml).toBe(false);
      const entityAndAcs = await api.patch(path, { saml_acs_url: 'https://idp.example.com/acs' });
      expect(entityAndAcs.body.has_saml).toBe(false);
      const all = await api.patch(path, {
        saml_x509_cert: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
      });
      expect(all.status).toBe(200);
      expect(all.body.has_saml).toBe(true);
      expect((await api.get(path)).body.has_saml).toBe(true);
      const certificateCleared = await api.patch(path, { saml_x509_cert: '' });
      expect(certificateCleared.body.has_saml).toBe(false);
      const restored = await api.patch(path, { saml_x509_cert: 'cert' });
      expect(restored.body.has_saml).toBe(true);
      const entityCleared = await api.patch(path, { saml_entity_id: null });
      expect(entityCleared.body.has_saml).toBe(false);
    });

    it('answers 400 when the domain is renamed to an invalid value', async () => {
      const created = await createDomain(freshDomain());

      const response = await api.patch(`${domainsPath()}${created.id}/`, { domain: 'one.two.c' });

      expect(response.status).toBe(400);
      expect(response.body).toEqual(INVALID_DOMAIN);
    });

    it('answers 400 unique when the domain is renamed to one that another organization holds', async () => {
      const taken = freshDomain('held');
      const other = await testApp.createOwner(`holder-${randomUUID()}@domains.test`, 'Holding organization');
      await createDomain(taken, {}, other.api, other.organizationId);
      const created = await createDomain(freshDomain('renamed'));

      const response = await api.patch(`${domainsPath()}${created.id}/`, { domain: taken });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'domain with this domain already exists.',
        attr: 'domain',
      });
      expect((await api.get(`${domainsPath()}${created.id}/`)).body.domain).toBe(created.domain);
    });

    it("answers 404 when updating another organization's domain", async () => {
      const created = await createDomain(freshDomain());
      const other = await testApp.createOwner(
        `updater-${randomUUID()}@domains.test`,
        'Updating organization',
      );

      const response = await other.api.patch(`${domainsPath(other.organizationId)}${created.id}/`, {
        saml_entity_id: 'x',
      });

      expect(response.status).toBe(404);
    });
  });

  describe('verify/', () => {
    it('answers 200 with is_verified false when no TXT record exists', async () => {
      const created = await createDomain(freshDomain('no-record'));

      const response = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: created.id, is_verified: false, verified_at: null });
    });

    it('answers 200 with is_verified false when the TXT record holds another value', async () => {
      const created = await createDomain(freshDomain('wrong-record'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, ['not-the-challenge']);

      const response = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ is_verified: false, verified_at: null });
    });

    it('does not accept the challenge published on the domain itself instead of _posthog-challenge.<domain>', async () => {
      const created = await createDomain(freshDomain('wrong-name'));
      dns.setTxt(created.domain, [created.verification_challenge]);

      const response = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.status).toBe(200);
      expect(response.body.is_verified).toBe(false);
    });

    it("does not accept another domain's challenge", async () => {
      const created = await createDomain(freshDomain('borrowed'));
      const donor = await createDomain(freshDomain('donor'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, [donor.verification_challenge]);

      const response = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.body.is_verified).toBe(false);
    });

    it('verifies the domain when _posthog-challenge.<domain> holds the challenge, with an ISO verified_at', async () => {
      const created = await createDomain(freshDomain('verified'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, [
        'some-other-record',
        created.verification_challenge,
      ]);
      const before = Date.now();

      const response = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.status).toBe(200);
      expect(response.body.is_verified).toBe(true);
      expect(response.body.verified_at).toEqual(expect.stringMatching(ISO_TIMESTAMP));
      const verifiedAt = Date.parse(response.body.verified_at);
      expect(verifiedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(verifiedAt).toBeLessThanOrEqual(Date.now() + 1000);
      const fetched = await api.get(`${domainsPath()}${created.id}/`);
      expect(fetched.body).toMatchObject({ is_verified: true, verified_at: response.body.verified_at });
    });

    it('verifies after a failed attempt once the record is published', async () => {
      const created = await createDomain(freshDomain('retry'));
      const first = await api.post(`${domainsPath()}${created.id}/verify/`);
      expect(first.body.is_verified).toBe(false);
      dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);

      const second = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(second.body.is_verified).toBe(true);
    });

    it('answers 400 already_verified when verifying a verified domain again', async () => {
      const created = await createDomain(freshDomain('again'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);
      const first = await api.post(`${domainsPath()}${created.id}/verify/`);
      expect(first.body.is_verified).toBe(true);

      const second = await api.post(`${domainsPath()}${created.id}/verify/`);

      expect(second.status).toBe(400);
      expect(second.body).toEqual({
        type: 'validation_error',
        code: 'already_verified',
        detail: 'This domain has already been verified.',
        attr: null,
      });
      expect((await api.get(`${domainsPath()}${created.id}/`)).body.verified_at).toBe(first.body.verified_at);
    });

    it('lets an admin verify a domain', async () => {
      const created = await createDomain(freshDomain('admin-verified'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);

      const response = await admin.api.post(`${domainsPath()}${created.id}/verify/`);

      expect(response.status).toBe(200);
      expect(response.body.is_verified).toBe(true);
    });

    it('allows jit_provisioning_enabled and sso_enforcement once the domain is verified', async () => {
      const created = await createDomain(freshDomain('sso'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);
      expect((await api.post(`${domainsPath()}${created.id}/verify/`)).body.is_verified).toBe(true);

      const response = await api.patch(`${domainsPath()}${created.id}/`, {
        jit_provisioning_enabled: true,
        sso_enforcement: 'google-oauth2',
      });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        jit_provisioning_enabled: true,
        sso_enforcement: 'google-oauth2',
        is_verified: true,
      });
      const fetched = await api.get(`${domainsPath()}${created.id}/`);
      expect(fetched.body).toMatchObject({
        jit_provisioning_enabled: true,
        sso_enforcement: 'google-oauth2',
      });
    });

    it("answers 404 when verifying another organization's domain", async () => {
      const created = await createDomain(freshDomain('foreign'));
      dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);
      const other = await testApp.createOwner(
        `verifier-${randomUUID()}@domains.test`,
        'Verifying organization',
      );

      const response = await other.api.post(`${domainsPath(other.organizationId)}${created.id}/verify/`);

      expect(response.status).toBe(404);
      expect((await api.get(`${domainsPath()}${created.id}/`)).body.is_verified).toBe(false);
    });
  });

  describe('verify/ without a reachable DNS server', () => {
    let unreachableApp: ManagementTestApp;

    beforeAll(async () => {
      // A UDP port that was just free: queries to it are refused.
      const socket = createSocket('udp4');
      const port = await new Promise<number>((resolve) =>
        socket.bind(0, '127.0.0.1', () => resolve(socket.address().port)),
      );
      await new Promise<void>((resolve) => socket.close(() => resolve()));
      unreachableApp = await startManagementTestApp({ dnsServers: [`127.0.0.1:${port}`] });
    });

    afterAll(async () => {
      await unreachableApp?.close();
    });

    it('answers 200 with the domain still unverified', async () => {
      const owner = await unreachableApp.createOwner(
        `dnsless-${randomUUID()}@domains.test`,
        'DNS-less organization',
      );
      const created = await owner.api.post(domainsPath(owner.organizationId), {
        domain: freshDomain('dnsless'),
      });

      const response = await owner.api.post(`${domainsPath(owner.organizationId)}${created.body.id}/verify/`);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: created.body.id, is_verified: false, verified_at: null });
    }, 30_000);
  });

  describe('delete', () => {
    it('deletes a domain with 204 and no body; it is gone and its name is free again', async () => {
      const domain = freshDomain('deleted');
      const created = await createDomain(domain);

      const response = await api.delete(`${domainsPath()}${created.id}/`);

      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      expect((await api.get(`${domainsPath()}${created.id}/`)).status).toBe(404);
      const other = await testApp.createOwner(`reuser-${randomUUID()}@domains.test`, 'Reusing organization');
      expect((await other.api.post(domainsPath(other.organizationId), { domain })).status).toBe(201);
    });

    it('lets an admin delete a domain', async () => {
      const created = await createDomain(freshDomain('admin-deleted'));

      const response = await admin.api.delete(`${domainsPath()}${created.id}/`);

      expect(response.status).toBe(204);
    });

    it("answers 404 when deleting another organization's domain, and keeps it", async () => {
      const created = await createDomain(freshDomain('kept'));
      const other = await testApp.createOwner(
        `deleter-${randomUUID()}@domains.test`,
        'Deleting organization',
      );

      const response = await other.api.delete(`${domainsPath(other.organizationId)}${created.id}/`);

      expect(response.status).toBe(404);
      expect((await api.get(`${domainsPath()}${created.id}/`)).status).toBe(200);
    });
  });
});
