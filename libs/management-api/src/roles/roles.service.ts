import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, QueryFailedError } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  FeatureFlag,
  FeatureFlagRoleAccess,
  MembershipLevel,
  OrganizationMembership,
  OrganizationResourceAccess,
  ResourceAccessLevel,
  Role,
  RoleMembership,
  User,
} from '@hogbase/postgres';
import type { ResolvedOrganization, ResolvedProject } from '../auth/access-context';
import { ApiError, notFound, permissionDenied } from '../common/api-error';
import { isUuid } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { presentFeatureFlag } from '../feature-flags/feature-flag.presenter';
import { FEATURE_FLAGS_RESOURCE, FlagPermissionsService } from '../feature-flags/flag-permissions.service';
import type { CreateRoleAccessDto, CreateRoleDto, CreateRoleMembershipDto, UpdateRoleDto } from './roles.dto';
import {
  presentMembership,
  presentRole,
  presentRoleAccess,
  type RoleAccessResponse,
  type RoleMembershipResponse,
  type RoleResponse,
} from './role.presenter';

const UNIQUE_VIOLATION = '23505';
const ADMIN_REQUIRED = 'You need to have admin level or higher.';

function isUniqueViolation(error: unknown): boolean {
  return (
    error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION
  );
}

/**
 * Roles of an organization, their members, and their access to flags (PostHog's ee role and
 * feature_flag_role_access viewsets, reference §8.4). Writes on roles need an admin.
 */
@Injectable()
export class RolesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly permissions: FlagPermissionsService,
  ) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
  ): Promise<{ count: number; results: RoleResponse[] }> {
    const [roles, count] = await this.dataSource.getRepository(Role).findAndCount({
      where: { organizationId: organization.id },
      relations: { createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { count, results: await this.presentAll(roles) };
  }

  async retrieve(resolved: ResolvedOrganization, id: string): Promise<RoleResponse> {
    return (await this.presentAll([await this.find(resolved, id)]))[0];
  }

  async create(user: User, resolved: ResolvedOrganization, dto: CreateRoleDto): Promise<RoleResponse> {
    requireAdmin(resolved);
    // A new role starts at the organization's default level for flags (37 without one).
    const level =
      dto.feature_flags_access_level ??
      (
        await this.dataSource
          .getRepository(OrganizationResourceAccess)
          .findOneBy({ organizationId: resolved.organization.id, resource: FEATURE_FLAGS_RESOURCE })
      )?.accessLevel ??
      ResourceAccessLevel.CanAlwaysEdit;
    const repository = this.dataSource.getRepository(Role);
    const role = repository.create({
      id: uuidv7(),
      organizationId: resolved.organization.id,
      name: dto.name,
      featureFlagsAccessLevel: level,
      createdById: user.id,
    });
    await this.saveUnique(role);
    role.createdBy = user;
    return presentRole(role, [], []);
  }

  async update(resolved: ResolvedOrganization, id: string, dto: UpdateRoleDto): Promise<RoleResponse> {
    requireAdmin(resolved);
    const role = await this.find(resolved, id);
    if (dto.name !== undefined) role.name = dto.name;
    if (dto.feature_flags_access_level !== undefined)
      role.featureFlagsAccessLevel = dto.feature_flags_access_level;
    const { createdBy, ...columns } = role;
    await this.saveUnique(columns);
    role.createdBy = createdBy;
    return (await this.presentAll([role]))[0];
  }

  async remove(resolved: ResolvedOrganization, id: string): Promise<void> {
    requireAdmin(resolved);
    const role = await this.find(resolved, id);
    await this.dataSource.getRepository(Role).delete({ id: role.id });
  }

  async listMembers(resolved: ResolvedOrganization, roleId: string, page: PageRequest) {
    const role = await this.find(resolved, roleId);
    const [members, count] = await this.dataSource.getRepository(RoleMembership).findAndCount({
      where: { roleId: role.id },
      relations: { user: true },
      order: { joinedAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { count, results: members.map(presentMembership) };
  }

  async addMember(
    resolved: ResolvedOrganization,
    roleId: string,
    dto: CreateRoleMembershipDto,
  ): Promise<RoleMembershipResponse> {
    requireAdmin(resolved);
    const role = await this.find(resolved, roleId);
    // Only a member of the organization can hold one of its roles.
    const user = isUuid(dto.user_uuid)
      ? await this.dataSource.getRepository(User).findOneBy({ uuid: dto.user_uuid })
      : null;
    const isMember =
      user !== null &&
      (await this.dataSource
        .getRepository(OrganizationMembership)
        .existsBy({ organizationId: resolved.organization.id, userId: user.id }));
    if (!user || !isMember) throw new ApiError('invalid_input', 'User does not exist.', 'user_uuid');
    const repository = this.dataSource.getRepository(RoleMembership);
    const membership = { id: uuidv7(), roleId: role.id, userId: user.id };
    try {
      await repository.insert(membership);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ApiError('unique', 'User is already part of the role.', 'user_uuid');
      throw error;
    }
    const saved = await repository.findOneOrFail({ where: { id: membership.id }, relations: { user: true } });
    return presentMembership(saved);
  }

  async removeMember(resolved: ResolvedOrganization, roleId: string, id: string): Promise<void> {
    requireAdmin(resolved);
    const role = await this.find(resolved, roleId);
    const result = isUuid(id)
      ? await this.dataSource.getRepository(RoleMembership).delete({ id, roleId: role.id })
      : { affected: 0 };
    if (!result.affected) throw notFound();
  }

  // Role access of one flag.

  async listAccess(user: User, project: ResolvedProject, flagId: string, page: PageRequest) {
    const flag = await this.flagOf(project, flagId);
    const [rows, count] = await this.dataSource.getRepository(FeatureFlagRoleAccess).findAndCount({
      where: { featureFlagId: flag.id },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { count, results: await this.presentAccess(user, project, flag, rows) };
  }

  async retrieveAccess(
    user: User,
    project: ResolvedProject,
    flagId: string,
    id: string,
  ): Promise<RoleAccessResponse> {
    const flag = await this.flagOf(project, flagId);
    const row = /^\d{1,9}$/.test(id)
      ? await this.dataSource
          .getRepository(FeatureFlagRoleAccess)
          .findOneBy({ id: Number(id), featureFlagId: flag.id })
      : null;
    if (!row) throw notFound();
    return (await this.presentAccess(user, project, flag, [row]))[0];
  }

  async createAccess(
    user: User,
    project: ResolvedProject,
    flagId: string,
    dto: CreateRoleAccessDto,
  ): Promise<RoleAccessResponse> {
    const flag = await this.flagOf(project, flagId);
    await this.requireRoleAccessEdit(user, project, flag);
    const role = isUuid(dto.role_id)
      ? await this.dataSource
          .getRepository(Role)
          .findOneBy({ id: dto.role_id, organizationId: project.organization.id })
      : null;
    if (!role) throw new ApiError('invalid_input', 'Role does not exist.', 'role_id');
    const repository = this.dataSource.getRepository(FeatureFlagRoleAccess);
    let row: FeatureFlagRoleAccess;
    try {
      row = await repository.save(repository.create({ featureFlagId: flag.id, roleId: role.id }));
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError('unique', 'The fields feature_flag, role must make a unique set.');
      }
      throw error;
    }
    return (await this.presentAccess(user, project, flag, [row]))[0];
  }

  async removeAccess(user: User, project: ResolvedProject, flagId: string, id: string): Promise<void> {
    const flag = await this.flagOf(project, flagId);
    await this.requireRoleAccessEdit(user, project, flag);
    const result = /^\d{1,9}$/.test(id)
      ? await this.dataSource
          .getRepository(FeatureFlagRoleAccess)
          .delete({ id: Number(id), featureFlagId: flag.id })
      : { affected: 0 };
    if (!result.affected) throw notFound();
  }

  private async requireRoleAccessEdit(
    user: User,
    project: ResolvedProject,
    flag: FeatureFlag,
  ): Promise<void> {
    const rights = await this.permissions.rightsOf(user, project);
    if (!this.permissions.mayManageRoleAccess(rights, flag)) {
      throw permissionDenied("You can't edit roles for this feature flag.");
    }
  }

  /** A flag of the project (deleted ones too), or PostHog's 404 for role access. */
  private async flagOf(project: ResolvedProject, id: string): Promise<FeatureFlag> {
    const flag = /^\d{1,9}$/.test(id)
      ? await this.dataSource
          .getRepository(FeatureFlag)
          .findOne({ where: { id: Number(id), teamId: project.team.id }, relations: { createdBy: true } })
      : null;
    if (!flag) throw notFound('Feature flag not found.');
    return flag;
  }

  private async find({ organization }: ResolvedOrganization, id: string): Promise<Role> {
    const role = isUuid(id)
      ? await this.dataSource
          .getRepository(Role)
          .findOne({ where: { id, organizationId: organization.id }, relations: { createdBy: true } })
      : null;
    if (!role) throw notFound();
    return role;
  }

  private async saveUnique(role: Role): Promise<void> {
    try {
      await this.dataSource.getRepository(Role).save(role);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ApiError('unique', 'There is already a role with this name.', 'name');
      throw error;
    }
  }

  /** Roles with their members and the flags they were given access to, in two queries. */
  private async presentAll(roles: readonly Role[]): Promise<RoleResponse[]> {
    if (roles.length === 0) return [];
    const ids = roles.map((role) => role.id);
    const [members, flags] = await Promise.all([
      this.dataSource.getRepository(RoleMembership).find({
        where: { roleId: In(ids) },
        relations: { user: true },
        order: { joinedAt: 'ASC', id: 'ASC' },
      }),
      this.dataSource.query<{ role_id: string; id: number; key: string }[]>(
        `SELECT a.role_id, f.id, f.key FROM feature_flag_role_access a
           JOIN feature_flags f ON f.id = a.feature_flag_id
          WHERE a.role_id = ANY($1::uuid[]) ORDER BY f.id`,
        [ids],
      ),
    ]);
    return roles.map((role) =>
      presentRole(
        role,
        members.filter((member) => member.roleId === role.id),
        flags.filter((flag) => flag.role_id === role.id),
      ),
    );
  }

  private async presentAccess(
    user: User,
    project: ResolvedProject,
    flag: FeatureFlag,
    rows: readonly FeatureFlagRoleAccess[],
  ): Promise<RoleAccessResponse[]> {
    if (rows.length === 0) return [];
    const rights = await this.permissions.rightsOf(user, project);
    const presentedFlag = presentFeatureFlag(flag, await this.permissions.canEdit(rights, flag));
    const roles = await this.dataSource
      .getRepository(Role)
      .find({ where: { id: In(rows.map((row) => row.roleId)) }, relations: { createdBy: true } });
    const presentedRoles = new Map((await this.presentAll(roles)).map((role) => [role.id, role]));
    return rows.map((row) => presentRoleAccess(row, presentedFlag, presentedRoles.get(row.roleId)!));
  }
}

function requireAdmin({ membership }: ResolvedOrganization): void {
  if (membership.level < MembershipLevel.Admin) throw permissionDenied(ADMIN_REQUIRED);
}
