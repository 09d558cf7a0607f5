import { Injectable } from '@nestjs/common';
import type { FeatureFlag, FeatureFlagRoleAccess, User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { ApiError, notFound, permissionDenied } from '../common/api.error';
import { isUuid } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { presentFeatureFlag } from '../feature-flags/feature-flag.presenter';
import { FlagPermissionsService } from '../feature-flags/flag-permissions.service';
import { FeatureFlagRoleAccessRepository } from './feature-flag-role-access.repository';
import { RoleRepository } from './role.repository';
import type { CreateRoleAccessDto } from './roles.dto';
import { presentRoleAccess, type RoleAccessResponse } from './role.presenter';
import { RolesService } from './roles.service';

/**
 * The roles given access to one flag (PostHog's `ee/api/feature_flag_role_access.py`). The flag is
 * looked up first, deleted ones included: an unknown flag is its own 404 on every route, before any
 * permission check. A path id the route could not read is null, and names nothing.
 */
@Injectable()
export class FeatureFlagRoleAccessService {
  constructor(
    private readonly access: FeatureFlagRoleAccessRepository,
    private readonly roles: RoleRepository,
    private readonly rolesService: RolesService,
    private readonly permissions: FlagPermissionsService,
  ) {}

  async list(
    user: User,
    project: ResolvedProject,
    flagId: number | null,
    page: PageRequest,
  ): Promise<{ count: number; results: RoleAccessResponse[] }> {
    const flag = await this.flagOf(project, flagId);
    const [rows, count] = await this.access.listOfFlag(flag.id, page);
    return { count, results: await this.present(user, project, flag, rows) };
  }

  async retrieve(
    user: User,
    project: ResolvedProject,
    flagId: number | null,
    id: number | null,
  ): Promise<RoleAccessResponse> {
    const flag = await this.flagOf(project, flagId);
    const row = id === null ? null : await this.access.findOfFlag(flag.id, id);
    if (!row) throw notFound();
    return (await this.present(user, project, flag, [row]))[0];
  }

  async create(
    user: User,
    project: ResolvedProject,
    flagId: number | null,
    dto: CreateRoleAccessDto,
  ): Promise<RoleAccessResponse> {
    const flag = await this.flagOf(project, flagId);
    await this.requireManage(user, project, flag);
    const role = isUuid(dto.role_id)
      ? await this.roles.findInOrganization(project.organization.id, dto.role_id)
      : null;
    if (!role) throw new ApiError('invalid_input', 'Role does not exist.', 'role_id');
    const row = await this.access.insert(flag.id, role.id);
    if (!row) throw new ApiError('unique', 'The fields feature_flag, role must make a unique set.');
    return (await this.present(user, project, flag, [row]))[0];
  }

  async remove(
    user: User,
    project: ResolvedProject,
    flagId: number | null,
    id: number | null,
  ): Promise<void> {
    const flag = await this.flagOf(project, flagId);
    await this.requireManage(user, project, flag);
    if (id === null || !(await this.access.deleteOfFlag(flag.id, id))) throw notFound();
  }

  private async requireManage(user: User, project: ResolvedProject, flag: FeatureFlag): Promise<void> {
    const rights = await this.permissions.rightsOf(user, project);
    if (!this.permissions.mayManageRoleAccess(rights, flag)) {
      throw permissionDenied("You can't edit roles for this feature flag.");
    }
  }

  private async flagOf(project: ResolvedProject, id: number | null): Promise<FeatureFlag> {
    const flag = id === null ? null : await this.access.findFlagInProject(project.team.id, id);
    if (!flag) throw notFound('Feature flag not found.');
    return flag;
  }

  /** Each link with the flag as its retrieve answers it and the role with its members and flags. */
  private async present(
    user: User,
    project: ResolvedProject,
    flag: FeatureFlag,
    rows: readonly FeatureFlagRoleAccess[],
  ): Promise<RoleAccessResponse[]> {
    if (rows.length === 0) return [];
    const rights = await this.permissions.rightsOf(user, project);
    const presentedFlag = presentFeatureFlag(flag, await this.permissions.canEdit(rights, flag));
    const roles = await this.roles.findByIds(rows.map((row) => row.roleId));
    const presentedRoles = new Map((await this.rolesService.present(roles)).map((role) => [role.id, role]));
    return rows.map((row) => presentRoleAccess(row, presentedFlag, presentedRoles.get(row.roleId)!));
  }
}
