import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('organization_domains')
export class OrganizationDomain {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  /** Unique across all organizations: a domain belongs to one organization. */
  @Column('varchar', { length: 128, unique: true })
  domain!: string;

  @Column('varchar', { name: 'verification_challenge', length: 128 })
  verificationChallenge!: string;

  @Column('timestamptz', { name: 'verified_at', nullable: true })
  verifiedAt!: Date | null;

  @Column('timestamptz', { name: 'last_verification_retry', nullable: true })
  lastVerificationRetry!: Date | null;

  @Column('boolean', { name: 'jit_provisioning_enabled', default: false })
  jitProvisioningEnabled!: boolean;

  @Column('varchar', { name: 'sso_enforcement', length: 28, default: '' })
  ssoEnforcement!: string;

  @Column('varchar', { name: 'saml_entity_id', length: 512, nullable: true })
  samlEntityId!: string | null;

  @Column('varchar', { name: 'saml_acs_url', length: 512, nullable: true })
  samlAcsUrl!: string | null;

  @Column('text', { name: 'saml_x509_cert', nullable: true })
  samlX509Cert!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}
