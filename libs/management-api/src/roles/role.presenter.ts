import type { Role, RoleMembership, User } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentUserBasic, type UserBasicResponse } from '../users/user.presenter';

export interface RoleMembershipResponse {
  id: string;
  role_id: string;
  user: UserBasicResponse | null;
  joined_at: string;
  updated_at: string;
}

/** The spec's Role (embedded in role access), with PostHog's members and associated flags. */
export interface RoleResponse {
  id: string;
  name: string;
  feature_flags_access_level: number;
  created_at: string;
  created_by: UserBasicResponse | null;
  members: RoleMembershipResponse[];
  associated_flags: { id: number; key: string }[];
}

export function presentMembership(membership: RoleMembership & { user?: User }): RoleMembershipResponse {
  return {
    id: membership.id,
    role_id: membership.roleId,
    user: membership.user ? presentUserBasic(membership.user) : null,
    joined_at: iso(membership.joinedAt),
    updated_at: iso(membership.updatedAt),
  };
}

export function presentRole(
  role: Role,
  members: readonly (RoleMembership & { user?: User })[],
  flags: readonly { id: number; key: string }[],
): RoleResponse {
  return {
    id: role.id,
    name: role.name,
    feature_flags_access_level: role.featureFlagsAccessLevel,
    created_at: iso(role.createdAt),
    created_by: role.createdBy ? presentUserBasic(role.createdBy) : null,
    members: members.map(presentMembership),
    associated_flags: flags.map(({ id, key }) => ({ id, key })),
  };
}
