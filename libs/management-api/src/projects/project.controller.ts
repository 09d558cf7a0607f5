import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MembershipLevel } from '@hogbase/postgres';
import {
  Access,
  AccessRule,
  Caller,
  AccessContext,
  requireOrganization,
  requireProject,
} from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { RequestUrl } from '../common/request-url.decorator';
import { PROJECT_ROOTS } from '../routes/project-scoped-paths.util';
import { ApiErrorResponse, ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { CreateProjectDto, UpdateProjectDto } from './project.dto';
import { ProjectResponse } from './project.presenter';
import { ProjectService } from './project.service';

/** A key scoped to projects acts on those projects only: it cannot make another one. */
const REFUSE_PROJECT_SCOPED_KEYS: AccessRule['refuseRestrictedKeys'] = {
  restrictions: ['project'],
  detail: 'API keys scoped to projects cannot create projects.',
};

@ApiTags('projects')
@Controller(PROJECT_ROOTS)
export class ProjectController {
  constructor(private readonly projects: ProjectService) {}

  @Get()
  @ApiOperation({ summary: "List the projects of the caller's organizations" })
  @ApiPage(ProjectResponse)
  @Access({ scope: 'project:read' })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<ProjectResponse>> {
    const { page } = query;
    const { count, results } = await this.projects.list(caller, page);
    return toPage(url, page, count, results);
  }

  @Post()
  @ApiOperation({ summary: "Create a project in the caller's current organization (admin)" })
  @ApiModelResponse(ProjectResponse, HttpStatus.CREATED)
  @ApiErrorResponse(HttpStatus.NOT_FOUND, 'The caller has no current organization (it was left or deleted)')
  @Access({ scope: 'project:write', refuseRestrictedKeys: REFUSE_PROJECT_SCOPED_KEYS })
  create(@Caller() caller: AccessContext, @Body() dto: CreateProjectDto): Promise<ProjectResponse> {
    return this.projects.createInCurrentOrganization(caller, dto);
  }

  @Get(':id')
  @ApiModelResponse(ProjectResponse)
  @Access({ scope: 'project:read', projectParam: 'id' })
  retrieve(@Caller() caller: AccessContext, @Param('id') _id: string): ProjectResponse {
    return this.projects.retrieve(requireProject(caller));
  }

  @Patch(':id')
  @ApiOperation({ summary: "Update a project's name or settings (SDKs see them on their next load)" })
  @ApiModelResponse(ProjectResponse)
  @Access({ scope: 'project:write', projectParam: 'id' })
  update(
    @Caller() caller: AccessContext,
    @Param('id') _id: string,
    @Body() dto: UpdateProjectDto,
  ): Promise<ProjectResponse> {
    return this.projects.update(requireProject(caller), dto);
  }

  @Patch(':id/reset_token')
  @ApiOperation({ summary: 'Replace the project API key (admin): the old one stops working' })
  @ApiModelResponse(ProjectResponse)
  @Access({ scope: 'project:write', projectParam: 'id', level: MembershipLevel.Admin })
  resetToken(@Caller() caller: AccessContext, @Param('id') _id: string): Promise<ProjectResponse> {
    return this.projects.resetToken(requireProject(caller));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a project (admin)' })
  @ApiNoContent()
  @Access({ scope: 'project:write', projectParam: 'id', level: MembershipLevel.Admin })
  async remove(@Caller() caller: AccessContext, @Param('id') _id: string): Promise<void> {
    await this.projects.remove(requireProject(caller));
  }
}

/** PostHog 2025's organization-scoped project routes, handy for scripting several organizations. */
@ApiTags('projects')
@Controller('api/organizations/:organization_id/projects')
export class OrganizationProjectController {
  constructor(private readonly projects: ProjectService) {}

  @Get()
  @ApiOperation({ summary: "The organization's projects" })
  @ApiPage(ProjectResponse)
  @Access({ scope: 'project:read', organizationParam: 'organization_id' })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<ProjectResponse>> {
    const { page } = query;
    const { count, results } = await this.projects.list(
      caller,
      page,
      requireOrganization(caller).organization.id,
    );
    return toPage(url, page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Create a project in the organization (admin)' })
  @ApiModelResponse(ProjectResponse, HttpStatus.CREATED)
  @Access({
    scope: 'project:write',
    organizationParam: 'organization_id',
    level: MembershipLevel.Admin,
    refuseRestrictedKeys: REFUSE_PROJECT_SCOPED_KEYS,
  })
  create(@Caller() caller: AccessContext, @Body() dto: CreateProjectDto): Promise<ProjectResponse> {
    return this.projects.create(caller, requireOrganization(caller), dto);
  }
}
