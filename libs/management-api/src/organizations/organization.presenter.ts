import type { MembershipLevel, Organization, Team } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentProjectBasic, ProjectBasicResponse } from '../projects/project.presenter';

export interface OrganizationResponse {
  id: string;
  name: string;
  slug: string;
  created_at: string;
  updated_at: string;
  membership_level: MembershipLevel | null;
  plugins_access_level: number;
  teams: ProjectBasicResponse[];
  available_product_features: unknown[];
  is_member_join_email_enabled: boolean;
  metadata: string;
  customer_id: string | null;
  enforce_2fa: boolean | null;
  member_count: string;
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
