import { ApiProperty } from '@nestjs/swagger';
import { MEMBERSHIP_LEVELS, PluginsAccessLevel } from '@hogbase/postgres';
import type { MembershipLevel, Organization, Team } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentProjectBasic, ProjectBasicResponse } from '../projects/project.presenter';
import { ApiModel, DATE_TIME, FREE_FORM_ARRAY } from '../schema/api-responses.decorator';

const PLUGINS_ACCESS_LEVELS = Object.values(PluginsAccessLevel).filter((value) => typeof value === 'number');

@ApiModel('Organization')
export class OrganizationResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  slug!: string;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;

  @ApiProperty({
    type: 'integer',
    enum: MEMBERSHIP_LEVELS,
    nullable: true,
    description: "The caller's level: 1 member, 8 admin, 15 owner",
  })
  membership_level!: MembershipLevel | null;

  @ApiProperty({
    type: 'integer',
    enum: PLUGINS_ACCESS_LEVELS,
    description: 'What members may do with pipeline apps: 0 none, 3 configure, 6 install, 9 root',
  })
  plugins_access_level!: number;

  @ApiProperty({ type: () => ProjectBasicResponse, isArray: true })
  teams!: ProjectBasicResponse[];

  @ApiProperty(FREE_FORM_ARRAY)
  available_product_features!: unknown[];

  @ApiProperty()
  is_member_join_email_enabled!: boolean;

  @ApiProperty({ description: 'JSON text: `{"instance_tag": …}`' })
  metadata!: string;

  @ApiProperty({ type: String, nullable: true })
  customer_id!: string | null;

  @ApiProperty({ type: Boolean, nullable: true })
  enforce_2fa!: boolean | null;

  @ApiProperty({ pattern: '^[0-9]+$', description: 'The number of members, in decimal' })
  member_count!: string;
}

export interface OrganizationView {
  organization: Organization;
  membershipLevel: MembershipLevel | null;
  teams: Team[];
  memberCount: number;
}

// NOTE: the interface types `metadata` and `member_count` as strings (PostHog's schema does too),
// so they are serialized as strings here: the instance metadata as JSON text, the count in decimal.
export function presentOrganization(view: OrganizationView, instanceTag: string): OrganizationResponse {
  const { organization } = view;
  return {
    id: organization.id,
    name: organization.name,
    slug: organization.slug,
    created_at: iso(organization.createdAt),
    updated_at: iso(organization.updatedAt),
    membership_level: view.membershipLevel,
    plugins_access_level: organization.pluginsAccessLevel,
    teams: view.teams.map(presentProjectBasic),
    available_product_features: organization.availableProductFeatures,
    is_member_join_email_enabled: organization.isMemberJoinEmailEnabled,
    metadata: JSON.stringify({ instance_tag: instanceTag }),
    customer_id: organization.customerId,
    enforce_2fa: organization.enforce2fa,
    member_count: String(view.memberCount),
  };
}
