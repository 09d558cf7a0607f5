import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MembershipLevel } from '@hogbase/postgres';
import { Access, type AccessRule, Caller, AccessContext, requireProject } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { RequestUrl } from '../common/request-url.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { CreateProjectSecretApiKeyDto, UpdateProjectSecretApiKeyDto } from './project-secret-api-key.dto';
import { ProjectSecretApiKeyResponse } from './project-secret-api-key.presenter';
import { ProjectSecretApiKeyService } from './project-secret-api-key.service';

const PROJECT = 'project_id';

// PostHog's TeamMemberStrictManagementPermission: project secrets are for admins, reads included.
const READ: AccessRule = { scope: 'project:read', projectParam: PROJECT, level: MembershipLevel.Admin };
const WRITE: AccessRule = { scope: 'project:write', projectParam: PROJECT, level: MembershipLevel.Admin };

@ApiTags('project secret API keys')
@Controller(projectScoped('project_secret_api_keys'))
export class ProjectSecretApiKeyController {
  constructor(private readonly keys: ProjectSecretApiKeyService) {}

  @Get()
  @ApiOperation({ summary: "List the project's secret API keys (phs_), newest first, without their values" })
  @ApiPage(ProjectSecretApiKeyResponse)
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<ProjectSecretApiKeyResponse>> {
    const { page } = query;
    const { count, results } = await this.keys.list(requireProject(caller).team, page);
    return toPage(url, page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Create a key: its value is in this answer only' })
  @ApiModelResponse(ProjectSecretApiKeyResponse, 201)
  @Access(WRITE)
  create(
    @Caller() caller: AccessContext,
    @Body() dto: CreateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    return this.keys.create(caller, requireProject(caller).team, dto);
  }

  @Get(':id')
  @ApiModelResponse(ProjectSecretApiKeyResponse)
  @Access(READ)
  retrieve(@Caller() caller: AccessContext, @Param('id') id: string): Promise<ProjectSecretApiKeyResponse> {
    return this.keys.retrieve(requireProject(caller).team, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: "Change a key's label or scopes" })
  @ApiModelResponse(ProjectSecretApiKeyResponse)
  @Access(WRITE)
  update(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Body() dto: UpdateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    return this.keys.update(requireProject(caller).team, id, dto);
  }

  @Put(':id')
  @ApiOperation({ summary: "Replace a key's label and scopes" })
  @ApiModelResponse(ProjectSecretApiKeyResponse)
  @Access(WRITE)
  replace(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Body() dto: CreateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    return this.keys.update(requireProject(caller).team, id, dto);
  }

  @Post(':id/roll')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replace the value: the old one stops working; the new one is in this answer only',
  })
  @ApiModelResponse(ProjectSecretApiKeyResponse)
  @Access(WRITE)
  roll(@Caller() caller: AccessContext, @Param('id') id: string): Promise<ProjectSecretApiKeyResponse> {
    return this.keys.roll(requireProject(caller).team, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a key: it stops working at once' })
  @ApiNoContent()
  @Access(WRITE)
  async remove(@Caller() caller: AccessContext, @Param('id') id: string): Promise<void> {
    await this.keys.remove(requireProject(caller).team, id);
  }
}
