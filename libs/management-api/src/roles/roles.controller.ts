import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, Caller, AccessContext, requireOrganization } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { UuidOrNullParam } from '../common/path-params.pipe';
import { RequestUrl } from '../common/request-url.decorator';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { CreateRoleDto, CreateRoleMembershipDto, UpdateRoleDto } from './roles.dto';
import { RoleMembershipResponse, RoleResponse } from './role.presenter';
import { RolesService } from './roles.service';

const ORGANIZATION = 'organization_id';

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
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<RoleResponse>> {
    const { count, results } = await this.roles.list(requireOrganization(caller), query.page);
    return toPage(url, query.page, count, results);
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
  retrieve(@Caller() caller: AccessContext, @UuidOrNullParam('id') id: string | null): Promise<RoleResponse> {
    return this.roles.retrieve(requireOrganization(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a role or change its flag access level (admin)' })
  @ApiModelResponse(RoleResponse)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  update(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('id') id: string | null,
    @Body() dto: UpdateRoleDto,
  ): Promise<RoleResponse> {
    return this.roles.update(requireOrganization(caller), id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a role (admin)' })
  @ApiNoContent()
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  async remove(@Caller() caller: AccessContext, @UuidOrNullParam('id') id: string | null): Promise<void> {
    await this.roles.remove(requireOrganization(caller), id);
  }

  @Get(':role_id/role_memberships')
  @ApiOperation({ summary: "The role's members" })
  @ApiPage(RoleMembershipResponse)
  @Access({ scope: 'organization:read', organizationParam: ORGANIZATION })
  async members(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('role_id') roleId: string | null,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<RoleMembershipResponse>> {
    const { count, results } = await this.roles.listMembers(requireOrganization(caller), roleId, query.page);
    return toPage(url, query.page, count, results);
  }

  @Post(':role_id/role_memberships')
  @ApiOperation({ summary: 'Add a member of the organization to the role (admin)' })
  @ApiModelResponse(RoleMembershipResponse, 201)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION })
  addMember(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('role_id') roleId: string | null,
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
    @UuidOrNullParam('role_id') roleId: string | null,
    @UuidOrNullParam('id') id: string | null,
  ): Promise<void> {
    await this.roles.removeMember(requireOrganization(caller), roleId, id);
  }
}
