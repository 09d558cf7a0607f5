import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireOrganization, requireProject } from '../auth/access-context';
import { Page, pageRequestFrom, toPage } from '../common/pagination.util';
import { publicRequestUrl } from '../common/public-url.util';
import { projectScoped } from '../routes/project-scoped-paths';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { CreateRoleAccessDto, CreateRoleDto, CreateRoleMembershipDto, UpdateRoleDto } from './roles.dto';
import { RoleAccessResponse, RoleMembershipResponse, RoleResponse } from './role.presenter';
import { RolesService } from './roles.service';

const ORGANIZATION = 'organization_id';
const PROJECT = 'project_id';

/** Roles of an organization; their writes need an admin (checked with PostHog's message). */
@ApiTags('roles')
@Controller('api/organizations/:organization_id/roles')
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @ApiOperation({ summary: "The organization's roles, with their members and flags" })
  @ApiPage(RoleResponse)
  @Access({ scope: 'organization:read', organizationParam: ORGANIZATION })
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ): Promise<Page<RoleResponse>> {
    const page = pageRequestFrom(query);
    const { count, results } = await this.roles.list(requireOrganization(caller), page);
    return toPage(publicRequestUrl(request), page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Create a role (admin); its flag access level defaults to the organization’s' })
  @ApiModelResponse(RoleResponse, 201)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  create(@Caller() caller: AccessContext, @Body() dto: CreateRoleDto): Promise<RoleResponse> {
    return this.roles.create(caller.user, requireOrganization(caller), dto);
  }

  @Get(':id')
  @ApiModelResponse(RoleResponse)
  @Access({ scope: 'organization:read', organizationParam: ORGANIZATION })
  retrieve(@Caller() caller: AccessContext, @Param('id') id: string): Promise<RoleResponse> {
    return this.roles.retrieve(requireOrganization(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a role or change its flag access level (admin)' })
  @ApiModelResponse(RoleResponse)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  update(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Body() dto: UpdateRoleDto,
  ): Promise<RoleResponse> {
    return this.roles.update(requireOrganization(caller), id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a role (admin)' })
  @ApiNoContent()
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  async remove(@Caller() caller: AccessContext, @Param('id') id: string): Promise<void> {
    await this.roles.remove(requireOrganization(caller), id);
  }

  @Get(':role_id/role_memberships')
  @ApiOperation({ summary: "The role's members" })
  @ApiPage(RoleMembershipResponse)
  @Access({ scope: 'organization:read', organizationParam: ORGANIZATION })
  async members(
    @Caller() caller: AccessContext,
    @Param('role_id') roleId: string,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ): Promise<Page<RoleMembershipResponse>> {
    const page = pageRequestFrom(query);
    const { count, results } = await this.roles.listMembers(requireOrganization(caller), roleId, page);
    return toPage(publicRequestUrl(request), page, count, results);
  }

  @Post(':role_id/role_memberships')
  @ApiOperation({ summary: 'Add a member of the organization to the role (admin)' })
  @ApiModelResponse(RoleMembershipResponse, 201)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  addMember(
    @Caller() caller: AccessContext,
    @Param('role_id') roleId: string,
    @Body() dto: CreateRoleMembershipDto,
  ): Promise<RoleMembershipResponse> {
    return this.roles.addMember(requireOrganization(caller), roleId, dto);
  }

  @Delete(':role_id/role_memberships/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a member from the role (admin)' })
  @ApiNoContent()
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  async removeMember(
    @Caller() caller: AccessContext,
    @Param('role_id') roleId: string,
    @Param('id') id: string,
  ): Promise<void> {
    await this.roles.removeMember(requireOrganization(caller), roleId, id);
  }
}

/** The roles given access to one flag. */
@ApiTags('feature flags')
@Controller(projectScoped('feature_flags/:feature_flag_id/role_access'))
export class FeatureFlagRoleAccessController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @ApiOperation({ summary: 'The roles given access to the flag' })
  @ApiPage(RoleAccessResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  async list(
    @Caller() caller: AccessContext,
    @Param('feature_flag_id') flagId: string,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ): Promise<Page<RoleAccessResponse>> {
    const page = pageRequestFrom(query);
    const { count, results } = await this.roles.listAccess(caller.user, requireProject(caller), flagId, page);
    return toPage(publicRequestUrl(request), page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Give a role access to the flag (who may edit its roles)' })
  @ApiModelResponse(RoleAccessResponse, 201)
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  create(
    @Caller() caller: AccessContext,
    @Param('feature_flag_id') flagId: string,
    @Body() dto: CreateRoleAccessDto,
  ): Promise<RoleAccessResponse> {
    return this.roles.createAccess(caller.user, requireProject(caller), flagId, dto);
  }

  @Get(':id')
  @ApiModelResponse(RoleAccessResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  retrieve(
    @Caller() caller: AccessContext,
    @Param('feature_flag_id') flagId: string,
    @Param('id') id: string,
  ): Promise<RoleAccessResponse> {
    return this.roles.retrieveAccess(caller.user, requireProject(caller), flagId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: "Take a role's access to the flag away" })
  @ApiNoContent()
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  async remove(
    @Caller() caller: AccessContext,
    @Param('feature_flag_id') flagId: string,
    @Param('id') id: string,
  ): Promise<void> {
    await this.roles.removeAccess(caller.user, requireProject(caller), flagId, id);
  }
}
