import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import type { OrganizationDomain } from '@hogbase/postgres';
import type { ResolvedOrganization } from '../auth/access.decorator';
import { ApiError, notFound, validationError } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { DnsChallengeService } from './dns-challenge.service';
import type { CreateDomainDto, UpdateDomainDto } from './domain.dto';
import { DomainResponse, presentDomain } from './domain.presenter';
import { DomainRepository } from './domain.repository';

/** `secrets.token_urlsafe(32)`: 43 URL-safe characters. */
function newChallenge(): string {
  return randomBytes(32).toString('base64url');
}

function duplicateDomain(): ApiError {
  return validationError('domain with this domain already exists.', 'domain', 'unique');
}

@Injectable()
export class DomainService {
  constructor(
    private readonly domains: DomainRepository,
    private readonly dnsChallenge: DnsChallengeService,
  ) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
  ): Promise<{ count: number; results: DomainResponse[] }> {
    const [domains, count] = await this.domains.listPage(organization.id, page);
    return { count, results: domains.map(presentDomain) };
  }

  /** SSO and JIT settings are dropped on create: they wait for verification. */
  async create({ organization }: ResolvedOrganization, dto: CreateDomainDto): Promise<DomainResponse> {
    const domain = this.domains.create({
      id: uuidv7(),
      organizationId: organization.id,
      domain: dto.domain,
      verificationChallenge: newChallenge(),
      verifiedAt: null,
      samlEntityId: dto.saml_entity_id ?? null,
      samlAcsUrl: dto.saml_acs_url ?? null,
      samlX509Cert: dto.saml_x509_cert ?? null,
    });
    await this.save(domain);
    return presentDomain(domain);
  }

  async retrieve(resolved: ResolvedOrganization, id: string): Promise<DomainResponse> {
    return presentDomain(await this.find(resolved, id));
  }

  async update(
    resolved: ResolvedOrganization,
    id: string | null,
    dto: UpdateDomainDto,
  ): Promise<DomainResponse> {
    const domain = await this.find(resolved, id);
    if (dto.domain !== undefined && dto.domain !== domain.domain) {
      // A new name proves nothing yet: it needs its own verification.
      domain.domain = dto.domain;
      domain.verifiedAt = null;
      domain.verificationChallenge = newChallenge();
      domain.jitProvisioningEnabled = false;
      domain.ssoEnforcement = '';
    }
    for (const field of ['jit_provisioning_enabled', 'sso_enforcement'] as const) {
      if (dto[field] !== undefined && domain.verifiedAt === null) {
        throw validationError(
          'This attribute cannot be updated until the domain is verified.',
          field,
          'verification_required',
        );
      }
    }
    if (dto.jit_provisioning_enabled !== undefined)
      domain.jitProvisioningEnabled = dto.jit_provisioning_enabled;
    if (dto.sso_enforcement !== undefined) domain.ssoEnforcement = dto.sso_enforcement;
    if (dto.saml_entity_id !== undefined) domain.samlEntityId = dto.saml_entity_id;
    if (dto.saml_acs_url !== undefined) domain.samlAcsUrl = dto.saml_acs_url;
    if (dto.saml_x509_cert !== undefined) domain.samlX509Cert = dto.saml_x509_cert;
    await this.save(domain);
    return presentDomain(domain);
  }

  async remove(resolved: ResolvedOrganization, id: string): Promise<void> {
    const domain = await this.find(resolved, id);
    await this.domains.delete(domain.id);
  }

  /** Answers 200 with the domain whether or not the record was found, as PostHog does. */
  async verify(resolved: ResolvedOrganization, id: string): Promise<DomainResponse> {
    const domain = await this.find(resolved, id);
    if (domain.verifiedAt) {
      throw validationError('This domain has already been verified.', null, 'already_verified');
    }
    const verified = await this.dnsChallenge.hasChallenge(domain.domain, domain.verificationChallenge);
    const now = new Date();
    if (verified) {
      domain.verifiedAt = now;
      domain.lastVerificationRetry = null;
    } else {
      domain.lastVerificationRetry = now;
    }
    await this.domains.save(domain);
    return presentDomain(domain);
  }

  /** `id` is null when the path held a malformed one (UuidOrNullParam). */
  private async find({ organization }: ResolvedOrganization, id: string | null): Promise<OrganizationDomain> {
    const domain = id === null ? null : await this.domains.findInOrganization(organization.id, id);
    if (!domain) throw notFound();
    return domain;
  }

  private async save(domain: OrganizationDomain): Promise<void> {
    if (!(await this.domains.saveIfNameFree(domain))) throw duplicateDomain();
  }
}
