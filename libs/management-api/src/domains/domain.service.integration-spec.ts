import { randomUUID } from 'node:crypto';
import { OrganizationDomain } from '@hogbase/postgres';
import { startDnsTestServer, type DnsTestServer } from '@hogbase/test-support';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedProject } from '../testing/fixtures.util';
import { DomainService } from './domain.service';
import { DomainsModule } from './domains.module';

const freshDomain = () => `d${randomUUID().slice(0, 8)}.example.com`;

describe('DomainService', () => {
  let dns: DnsTestServer;
  let context: FeatureTestContext;
  let domains: DomainService;

  beforeAll(async () => {
    dns = await startDnsTestServer();
    context = await createFeatureTestingModule([DomainsModule], { dnsServers: [dns.address] });
    domains = context.get(DomainService);
  });

  afterAll(async () => {
    await context?.close();
    await dns?.stop();
  });

  it("refuses a domain another organization has, with the unique field's 400", async () => {
    const first = await seedProject(context.dataSource);
    const second = await seedProject(context.dataSource);
    const domain = freshDomain();
    await domains.create(first, { domain });

    await expect(domains.create(second, { domain })).rejects.toMatchObject({
      status: 400,
      code: 'unique',
      attr: 'domain',
      detail: 'domain with this domain already exists.',
    });
    expect(await context.dataSource.getRepository(OrganizationDomain).countBy({ domain })).toBe(1);
  });

  it('refuses the JIT and SSO settings until the domain is verified', async () => {
    const owner = await seedProject(context.dataSource);
    const created = await domains.create(owner, { domain: freshDomain(), jit_provisioning_enabled: true });
    expect(created.jit_provisioning_enabled).toBe(false);

    await expect(domains.update(owner, created.id, { jit_provisioning_enabled: true })).rejects.toMatchObject(
      { status: 400, code: 'verification_required', attr: 'jit_provisioning_enabled' },
    );
    await expect(domains.update(owner, created.id, { sso_enforcement: 'saml' })).rejects.toMatchObject({
      code: 'verification_required',
      attr: 'sso_enforcement',
    });
  });

  it('verifies a domain by its TXT record, once, and a new name needs verifying again', async () => {
    const owner = await seedProject(context.dataSource);
    const created = await domains.create(owner, { domain: freshDomain() });

    const unverified = await domains.verify(owner, created.id);
    expect(unverified.is_verified).toBe(false);

    dns.setTxt(`_posthog-challenge.${created.domain}`, [created.verification_challenge]);
    const verified = await domains.verify(owner, created.id);
    expect(verified.is_verified).toBe(true);
    await expect(domains.verify(owner, created.id)).rejects.toMatchObject({
      status: 400,
      code: 'already_verified',
    });
    const withJit = await domains.update(owner, created.id, { jit_provisioning_enabled: true });
    expect(withJit.jit_provisioning_enabled).toBe(true);

    const renamed = await domains.update(owner, created.id, { domain: freshDomain() });
    expect(renamed).toMatchObject({ is_verified: false, verified_at: null, jit_provisioning_enabled: false });
    expect(renamed.verification_challenge).not.toBe(created.verification_challenge);
  });

  it("answers 404 for another organization's domain, as for an unknown one", async () => {
    const owner = await seedProject(context.dataSource);
    const stranger = await seedProject(context.dataSource);
    const theirs = await domains.create(stranger, { domain: freshDomain() });

    await expect(domains.retrieve(owner, theirs.id)).rejects.toMatchObject({ status: 404 });
    await expect(domains.remove(owner, theirs.id)).rejects.toMatchObject({ status: 404 });
    await expect(domains.retrieve(owner, randomUUID())).rejects.toMatchObject({ status: 404 });
    await expect(domains.retrieve(stranger, theirs.id)).resolves.toMatchObject({ id: theirs.id });
  });
});
