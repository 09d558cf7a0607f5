import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, Caller, AccessContext, requireProject } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { IntegerIdOrNullParam } from '../common/path-params.pipe';
import { RequestUrl } from '../common/request-url.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { FeatureFlagRoleAccessService } from './feature-flag-role-access.service';
import { CreateRoleAccessDto } from './roles.dto';
import { RoleAccessResponse } from './role.presenter';

const PROJECT = 'project_id';
const FLAG = 'feature_flag_id';

/** The roles given access to one flag. */
@ApiTags('feature flags')
@Controller(projectScoped('feature_flags/:feature_flag_id/role_access'))
export class FeatureFlagRoleAccessController {
  constructor(private readonly access: FeatureFlagRoleAccessService) {}

  @Get()
  @ApiOperation({ summary: 'The roles given access to the flag' })
  @ApiPage(RoleAccessResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  async list(
    @Caller() caller: AccessContext,
    @IntegerIdOrNullParam(FLAG) flagId: number | null,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<RoleAccessResponse>> {
    const { count, results } = await this.access.list(
      caller.user,
      requireProject(caller),
      flagId,
      query.page,
    );
    return toPage(url, query.page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Give a role access to the flag (who may edit its roles)' })
  @ApiModelResponse(RoleAccessResponse, 201)
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  create(
    @Caller() caller: AccessContext,
    @IntegerIdOrNullParam(FLAG) flagId: number | null,
    @Body() dto: CreateRoleAccessDto,
  ): Promise<RoleAccessResponse> {
    return this.access.create(caller.user, requireProject(caller), flagId, dto);
  }

  @Get(':id')
  @ApiModelResponse(RoleAccessResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  retrieve(
    @Caller() caller: AccessContext,
    @IntegerIdOrNullParam(FLAG) flagId: number | null,
    @IntegerIdOrNullParam('id') id: number | null,
  ): Promise<RoleAccessResponse> {
    return this.access.retrieve(caller.user, requireProject(caller), flagId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: "Take a role's access to the flag away" })
  @ApiNoContent()
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  async remove(
    @Caller() caller: AccessContext,
    @IntegerIdOrNullParam(FLAG) flagId: number | null,
    @IntegerIdOrNullParam('id') id: number | null,
  ): Promise<void> {
    await this.access.remove(caller.user, requireProject(caller), flagId, id);
  }
}
