import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MembershipLevel } from '@hogbase/postgres';
import { Access, Caller, AccessContext, requireOrganization } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { RequestUrl } from '../common/request-url.decorator';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { CreateOrganizationDto, UpdateOrganizationDto } from './organization.dto';
import { OrganizationResponse } from './organization.presenter';
import { OrganizationService } from './organization.service';

@ApiTags('organizations')
@Controller('api/organizations')
export class OrganizationController {
  constructor(private readonly organizations: OrganizationService) {}

  @Get()
  @ApiOperation({ summary: 'List the organizations the caller belongs to' })
  @ApiPage(OrganizationResponse)
  @Access({ scope: 'organization:read' })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<OrganizationResponse>> {
    const { page } = query;
    const { count, results } = await this.organizations.list(caller, page);
    return toPage(url, page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Create an organization, its first project and an owner membership' })
  @ApiModelResponse(OrganizationResponse, 201)
  @Access({
    scope: 'organization:write',
    refuseRestrictedKeys: {
      restrictions: ['organization', 'project'],
      detail: 'API keys scoped to organizations or projects cannot create organizations.',
    },
  })
  create(@Caller() caller: AccessContext, @Body() dto: CreateOrganizationDto): Promise<OrganizationResponse> {
    return this.organizations.create(caller, dto);
  }

  @Get(':id')
  @ApiModelResponse(OrganizationResponse)
  @Access({ scope: 'organization:read', organizationParam: 'id' })
  retrieve(@Caller() caller: AccessContext, @Param('id') _id: string): Promise<OrganizationResponse> {
    return this.organizations.retrieve(caller, requireOrganization(caller));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update an organization (admin)' })
  @ApiModelResponse(OrganizationResponse)
  @Access({ scope: 'organization:write', organizationParam: 'id', level: MembershipLevel.Admin })
  update(
    @Caller() caller: AccessContext,
    @Param('id') _id: string,
    @Body() dto: UpdateOrganizationDto,
  ): Promise<OrganizationResponse> {
    return this.organizations.update(caller, requireOrganization(caller), dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an organization with all its projects (owner)' })
  @ApiNoContent()
  @Access({
    scope: 'organization:write',
    organizationParam: 'id',
    level: MembershipLevel.Owner,
    // It deletes every project of the organization, not only the key's.
    refuseRestrictedKeys: {
      restrictions: ['project'],
      detail: 'API keys scoped to projects cannot delete organizations.',
    },
  })
  async remove(@Caller() caller: AccessContext, @Param('id') _id: string): Promise<void> {
    await this.organizations.remove(requireOrganization(caller));
  }
}
