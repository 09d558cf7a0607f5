import { ApiProperty } from '@nestjs/swagger';
import { ResourceAccessLevel } from '@hogbase/postgres';
import type { FeatureFlagRoleAccess, Role, RoleMembership, User } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { FeatureFlagResponse } from '../feature-flags/feature-flag.presenter';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';

const ACCESS_LEVELS = [ResourceAccessLevel.CanOnlyView, ResourceAccessLevel.CanAlwaysEdit];

@ApiModel('RoleMembership')
export class RoleMembershipResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  role_id!: string;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  user!: UserBasicResponse | null;

  @ApiProperty(DATE_TIME)
  joined_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;
}

@ApiModel('RoleAssociatedFlag')
export class AssociatedFlagResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty()
  key!: string;
}

/** A role (embedded in role access too), with its members and associated flags (`ee/api/role.py`). */
@ApiModel('Role')
export class RoleResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({
    type: 'integer',
    enum: ACCESS_LEVELS,
    description: '21: can only view flags; 37: can always edit them',
  })
  feature_flags_access_level!: ResourceAccessLevel;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  created_by!: UserBasicResponse | null;

  // PostHog's own schema types `members` and `associated_flags` as strings (method fields without
  // a type); PostHog answers arrays, and so does this server.
  @ApiProperty({ type: () => RoleMembershipResponse, isArray: true })
  members!: RoleMembershipResponse[];

  @ApiProperty({ type: () => AssociatedFlagResponse, isArray: true })
  associated_flags!: AssociatedFlagResponse[];
}

@ApiModel('FeatureFlagRoleAccess')
export class RoleAccessResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({
    type: () => FeatureFlagResponse,
    description: 'The feature flag, as its retrieve answers it',
  })
  feature_flag!: FeatureFlagResponse;

  @ApiProperty({ type: () => RoleResponse })
  role!: RoleResponse;

  @ApiProperty({ format: 'uuid' })
  role_id!: string;

  @ApiProperty(DATE_TIME)
  added_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;
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

export function presentRoleAccess(
  access: FeatureFlagRoleAccess,
  flag: FeatureFlagResponse,
  role: RoleResponse,
): RoleAccessResponse {
  return {
    id: access.id,
    feature_flag: flag,
    role,
    role_id: access.roleId,
    added_at: iso(access.addedAt),
    updated_at: iso(access.updatedAt),
  };
}
