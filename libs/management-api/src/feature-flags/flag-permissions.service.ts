import { Injectable } from '@nestjs/common';
import { MembershipLevel, ResourceAccessLevel, type FeatureFlag, type User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { FeatureFlagRoleAccessRepository } from '../roles/feature-flag-role-access.repository';
import { RoleRepository } from '../roles/role.repository';

/** Read once per request. */
export interface FlagEditRights {
  userId: number;
  isAdmin: boolean;
  organizationLevel: ResourceAccessLevel | null;
  /** The highest level among the user's roles in the organization; null without roles. */
  roleLevel: ResourceAccessLevel | null;
  roleIds: string[];
}

/** PostHog's can_user_edit_feature_flag (`posthog/models/feature_flag/permissions.py`). */
@Injectable()
export class FlagPermissionsService {
  constructor(
    private readonly roles: RoleRepository,
    private readonly roleAccess: FeatureFlagRoleAccessRepository,
  ) {}

  async rightsOf(user: User, { organization, membership }: ResolvedProject): Promise<FlagEditRights> {
    const [organizationLevel, roles] = await Promise.all([
      this.roles.organizationFlagsLevel(organization.id),
      this.roles.levelsOfMember(organization.id, user.id),
    ]);
    return {
      userId: user.id,
      isAdmin: membership.level >= MembershipLevel.Admin,
      organizationLevel,
      roleLevel: roles.length === 0 ? null : Math.max(...roles.map((role) => Number(role.level))),
      roleIds: roles.map((role) => role.id),
    };
  }

  /** One query for all the role-access links the flags need. */
  async canEditAll(rights: FlagEditRights, flags: readonly FeatureFlag[]): Promise<Map<number, boolean>> {
    const result = new Map<number, boolean>();
    const needLinks: number[] = [];
    for (const flag of flags) {
      const decided = decide(rights, flag);
      if (decided === 'needs_role_access') needLinks.push(flag.id);
      else result.set(flag.id, decided);
    }
    if (needLinks.length > 0) {
      const links =
        rights.roleIds.length === 0 ? [] : await this.roleAccess.linksBetween(needLinks, rights.roleIds);
      const linked = new Set(links.map((link) => link.featureFlagId));
      for (const id of needLinks) result.set(id, linked.has(id));
    }
    return result;
  }

  async canEdit(rights: FlagEditRights, flag: FeatureFlag): Promise<boolean> {
    return (await this.canEditAll(rights, [flag])).get(flag.id) ?? false;
  }

  /** PostHog's ee/api/feature_flag_role_access.py rule. */
  mayManageRoleAccess(rights: FlagEditRights, flag: FeatureFlag): boolean {
    return (
      rights.isAdmin ||
      flag.createdById === rights.userId ||
      rights.organizationLevel === null ||
      rights.organizationLevel === ResourceAccessLevel.CanAlwaysEdit ||
      rights.roleLevel === ResourceAccessLevel.CanAlwaysEdit
    );
  }
}

function decide(rights: FlagEditRights, flag: FeatureFlag): boolean | 'needs_role_access' {
  if (flag.createdById === rights.userId || rights.isAdmin) return true;
  if ((rights.organizationLevel ?? 0) >= ResourceAccessLevel.CanAlwaysEdit) return true;
  const organizationLevel = rights.organizationLevel ?? ResourceAccessLevel.CanAlwaysEdit;
  const level = rights.roleLevel ?? organizationLevel;
  if (level === ResourceAccessLevel.CanOnlyView) return 'needs_role_access';
  return level === ResourceAccessLevel.CanAlwaysEdit;
}
