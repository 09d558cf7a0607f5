import type { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';

export interface MemberResponse {
  id: string;
  user: UserBasicResponse;
  level: MembershipLevel;
  joined_at: string;
  updated_at: string;
  is_2fa_enabled: boolean;
  has_social_auth: boolean;
  last_login: string | null;
}

export function presentMember(membership: OrganizationMembership & { user: User }): MemberResponse {
  return {
    id: membership.id,
    user: presentUserBasic(membership.user),
    level: membership.level,
    joined_at: iso(membership.joinedAt),
    updated_at: iso(membership.updatedAt),
    // Authentication here is by API key only: no second factor or social login exists to report.
    is_2fa_enabled: false,
    has_social_auth: false,
    last_login: null,
  };
}
