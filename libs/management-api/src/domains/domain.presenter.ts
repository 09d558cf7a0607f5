import { ApiProperty } from '@nestjs/swagger';
import type { OrganizationDomain } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';
import { SSO_ENFORCEMENT_CHOICES } from './domain.dto';

@ApiModel('OrganizationDomain')
export class DomainResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  domain!: string;

  @ApiProperty()
  is_verified!: boolean;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  verified_at!: string | null;

  @ApiProperty({ description: 'The value of the TXT record _posthog-challenge.<domain> that verifies it' })
  verification_challenge!: string;

  @ApiProperty()
  jit_provisioning_enabled!: boolean;

  @ApiProperty({ enum: SSO_ENFORCEMENT_CHOICES })
  sso_enforcement!: string;

  @ApiProperty({ description: 'Whether the entity id, ACS URL and certificate are all set' })
  has_saml!: boolean;

  @ApiProperty({ type: String, nullable: true })
  saml_entity_id!: string | null;

  @ApiProperty({ type: String, nullable: true })
  saml_acs_url!: string | null;

  @ApiProperty({ type: String, nullable: true })
  saml_x509_cert!: string | null;
}

export function presentDomain(domain: OrganizationDomain): DomainResponse {
  return {
    id: domain.id,
    domain: domain.domain,
    is_verified: domain.verifiedAt !== null,
    verified_at: iso(domain.verifiedAt),
    verification_challenge: domain.verificationChallenge,
    jit_provisioning_enabled: domain.jitProvisioningEnabled,
    sso_enforcement: domain.ssoEnforcement,
    has_saml: Boolean(domain.samlEntityId && domain.samlAcsUrl && domain.samlX509Cert),
    saml_entity_id: domain.samlEntityId,
    saml_acs_url: domain.samlAcsUrl,
    saml_x509_cert: domain.samlX509Cert,
  };
}
