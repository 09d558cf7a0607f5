import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { MembershipLevel, ResourceAccessLevel, type Role, type User } from '@hogbase/postgres';
import type { ResolvedOrganization } from '../auth/access.decorator';
import { ApiError, notFound, permissionDenied } from '../common/api.error';
import { isUuid } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { MembershipRepository } from '../members/membership.repository';
import { FeatureFlagRoleAccessRepository } from './feature-flag-role-access.repository';
import { RoleMembershipRepository } from './role-membership.repository';
import { RoleRepository } from './role.repository';
import type { CreateRoleDto, CreateRoleMembershipDto, UpdateRoleDto } from './roles.dto';
import {
  presentMembership,
  presentRole,
  type RoleMembershipResponse,
  type RoleResponse,
} from './role.presenter';

const ADMIN_REQUIRED = 'You need to have admin level or higher.';

/**
 * Roles of an organization and their members (PostHog's `ee/api/role.py`). Writes need an
 * admin, checked before the role is looked up: a member is refused even for a role that does not
 * exist. A path id the route could not read is null, and names no role.
 */
@Injectable()
export class RolesService {
  constructor(
    private readonly roles: RoleRepository,
    private readonly memberships: RoleMembershipRepository,
    private readonly organizationMemberships: MembershipRepository,
    private readonly flagAccess: FeatureFlagRoleAccessRepository,
  ) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
  ): Promise<{ count: number; results: RoleResponse[] }> {
    const [roles, count] = await this.roles.listInOrganization(organization.id, page);
    return { count, results: await this.present(roles) };
  }

  async retrieve(resolved: ResolvedOrganization, id: string | null): Promise<RoleResponse> {
    return (await this.present([await this.find(resolved, id)]))[0];
  }

  async create(user: User, resolved: ResolvedOrganization, dto: CreateRoleDto): Promise<RoleResponse> {
    requireAdmin(resolved);
    // A new role starts at the organization's default level for flags (37 without one).
    const level =
      dto.feature_flags_access_level ??
      (await this.roles.organizationFlagsLevel(resolved.organization.id)) ??
      ResourceAccessLevel.CanAlwaysEdit;
    const role = await this.roles.insert({
      id: uuidv7(),
      organizationId: resolved.organization.id,
      name: dto.name,
      featureFlagsAccessLevel: level,
      createdById: user.id,
    });
    if (!role) throw nameTaken();
    role.createdBy = user;
    return presentRole(role, [], []);
  }

  async update(resolved: ResolvedOrganization, id: string | null, dto: UpdateRoleDto): Promise<RoleResponse> {
    requireAdmin(resolved);
    const role = await this.find(resolved, id);
    if (dto.name !== undefined) role.name = dto.name;
    if (dto.feature_flags_access_level !== undefined)
      role.featureFlagsAccessLevel = dto.feature_flags_access_level;
    if (!(await this.roles.update(role))) throw nameTaken();
    return (await this.present([role]))[0];
  }

  async remove(resolved: ResolvedOrganization, id: string | null): Promise<void> {
    requireAdmin(resolved);
    const role = await this.find(resolved, id);
    await this.roles.delete(role.id);
  }

  async listMembers(
    resolved: ResolvedOrganization,
    roleId: string | null,
    page: PageRequest,
  ): Promise<{ count: number; results: RoleMembershipResponse[] }> {
    const role = await this.find(resolved, roleId);
    const [members, count] = await this.memberships.listOfRole(role.id, page);
    return { count, results: members.map(presentMembership) };
  }

  async addMember(
    resolved: ResolvedOrganization,
    roleId: string | null,
    dto: CreateRoleMembershipDto,
  ): Promise<RoleMembershipResponse> {
    requireAdmin(resolved);
    const role = await this.find(resolved, roleId);
    // Only a member of the organization can hold one of its roles.
    const user = isUuid(dto.user_uuid)
      ? await this.organizationMemberships.findUserInOrganization(resolved.organization.id, dto.user_uuid)
      : null;
    if (!user) throw new ApiError('invalid_input', 'User does not exist.', 'user_uuid');
    const membership = await this.memberships.insert(role.id, user.id);
    if (!membership) throw new ApiError('unique', 'User is already part of the role.', 'user_uuid');
    return presentMembership(membership);
  }

  async removeMember(
    resolved: ResolvedOrganization,
    roleId: string | null,
    id: string | null,
  ): Promise<void> {
    requireAdmin(resolved);
    const role = await this.find(resolved, roleId);
    if (id === null || !(await this.memberships.delete(role.id, id))) throw notFound();
  }

  /** Roles with their members and the flags they were given access to, in two queries. */
  async present(roles: readonly Role[]): Promise<RoleResponse[]> {
    if (roles.length === 0) return [];
    const ids = roles.map((role) => role.id);
    const [members, flags] = await Promise.all([
      this.memberships.listOfRoles(ids),
      this.flagAccess.flagsOfRoles(ids),
    ]);
    return roles.map((role) =>
      presentRole(
        role,
        members.filter((member) => member.roleId === role.id),
        flags.filter((flag) => flag.role_id === role.id),
      ),
    );
  }

  private async find({ organization }: ResolvedOrganization, id: string | null): Promise<Role> {
    const role = id === null ? null : await this.roles.findInOrganization(organization.id, id);
    if (!role) throw notFound();
    return role;
  }
}

function requireAdmin({ membership }: ResolvedOrganization): void {
  if (membership.level < MembershipLevel.Admin) throw permissionDenied(ADMIN_REQUIRED);
}

function nameTaken(): ApiError {
  return new ApiError('unique', 'There is already a role with this name.', 'name');
}
