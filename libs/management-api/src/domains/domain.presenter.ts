import type { OrganizationDomain } from '@hogbase/postgres';
import { iso } from '../common/iso.util';

export interface DomainResponse {
  id: string;
  domain: string;
  is_verified: boolean;
  verified_at: string | null;
  verification_challenge: string;
  jit_provisioning_enabled: boolean;
  sso_enforcement: string;
  has_saml: boolean;
  saml_entity_id: string | null;
  saml_acs_url: string | null;
  saml_x509_cert: string | null;
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
