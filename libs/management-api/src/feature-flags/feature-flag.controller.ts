import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ActivityLogService } from '../activity/activity-log.service';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireProject } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { projectScoped } from '../routes/project-scoped-paths';
import { CreateFeatureFlagDto, UpdateFeatureFlagDto } from './feature-flag.dto';
import { FEATURE_FLAG_SCOPE, FeatureFlagService, type FlagListQuery } from './feature-flag.service';
import { FeatureFlagActionsService } from './feature-flag-actions.service';

const PROJECT = 'project_id';

function listQuery(query: Record<string, unknown>): FlagListQuery {
  const active = query.active === 'true' ? true : query.active === 'false' ? false : undefined;
  const type = query.type === 'boolean' || query.type === 'multivariant' ? query.type : undefined;
  return { active, type, search: typeof query.search === 'string' ? query.search : undefined };
}

@ApiTags('feature flags')
@Controller(projectScoped('feature_flags'))
export class FeatureFlagController {
  constructor(
    private readonly flags: FeatureFlagService,
    private readonly actions: FeatureFlagActionsService,
    private readonly activity: ActivityLogService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List the live (not deleted) flags, newest first' })
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const page = pageRequestFrom(query);
    const { count, results } = await this.flags.list(
      caller.user,
      requireProject(caller),
      page,
      listQuery(query),
    );
    return toPage(request, page, count, results);
  }

  @Post()
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  create(@Caller() caller: AccessContext, @Body() dto: CreateFeatureFlagDto) {
    return this.flags.create(caller.user, requireProject(caller), dto);
  }

  // Collection actions come before `:id`, which would otherwise take their names.

  @Get('activity')
  @ApiOperation({ summary: 'Changes to every flag of the project, newest first (?page=, ?limit=)' })
  @Access({ scope: 'activity_log:read', projectParam: PROJECT })
  allActivity(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    return this.activity.page(request, query, {
      teamId: requireProject(caller).team.id,
      scope: FEATURE_FLAG_SCOPE,
    });
  }

  @Get('evaluation_reasons')
  @ApiOperation({ summary: 'Each flag’s value and reason for ?distinct_id= (and ?groups=)' })
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  evaluationReasons(@Caller() caller: AccessContext, @Query() query: Record<string, unknown>) {
    return this.actions.evaluationReasons(requireProject(caller), query);
  }

  @Get('local_evaluation')
  @ApiOperation({
    summary: 'Flag definitions for SDK local evaluation: {flags, group_type_mapping, cohorts}',
  })
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  localEvaluation(@Caller() caller: AccessContext, @Query() query: Record<string, unknown>) {
    return this.actions.localEvaluation(requireProject(caller), query.send_cohorts !== undefined);
  }

  @Get('my_flags')
  @ApiOperation({ summary: "Every live flag's value for the key's own user" })
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  myFlags(@Caller() caller: AccessContext, @Query() query: Record<string, unknown>) {
    return this.actions.myFlags(caller.user, requireProject(caller), query);
  }

  @Post('user_blast_radius')
  @HttpCode(200)
  @ApiOperation({ summary: 'How many of the project’s persons (or groups) a condition matches' })
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  userBlastRadius(@Caller() caller: AccessContext, @Body() body: unknown) {
    return this.actions.userBlastRadius(requireProject(caller), body);
  }

  @Get(':id')
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  retrieve(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.flags.retrieve(caller.user, requireProject(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update a flag; {"deleted": true} deletes it (softly)' })
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  update(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UpdateFeatureFlagDto) {
    return this.flags.update(caller.user, requireProject(caller), id, dto);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Refused (405, no body): delete a flag with PATCH {"deleted": true}' })
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  remove(@Param('id') _id: string, @Res() response: Response): void {
    response.status(405).setHeader('Allow', 'GET, PATCH, HEAD, OPTIONS').end();
  }

  @Get(':id/activity')
  @Access({ scope: 'activity_log:read', projectParam: PROJECT })
  async flagActivity(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const project = requireProject(caller);
    const flag = await this.flags.find(project, id);
    return this.activity.page(request, query, {
      teamId: project.team.id,
      scope: FEATURE_FLAG_SCOPE,
      itemId: String(flag.id),
    });
  }

  @Post(':id/create_static_cohort_for_flag')
  @HttpCode(200)
  @ApiOperation({ summary: 'A static cohort of the persons the flag matches now' })
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  createStaticCohort(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.actions.createStaticCohort(caller.user, requireProject(caller), id);
  }

  @Post(':id/dashboard')
  @ApiOperation({ summary: "(Re)create the flag's usage dashboard" })
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  async dashboard(@Caller() caller: AccessContext, @Param('id') id: string, @Res() response: Response) {
    const outcome = await this.actions.dashboard(caller.user, requireProject(caller), id);
    response.status(outcome.success ? 200 : 400).json(outcome);
  }

  @Post(':id/enrich_usage_dashboard')
  @ApiOperation({
    summary: "Add $feature_view / $feature_interaction insights to the flag's usage dashboard",
  })
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  async enrichUsageDashboard(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Res() response: Response,
  ) {
    const outcome = await this.actions.enrichUsageDashboard(caller.user, requireProject(caller), id);
    response.status(outcome.success ? 200 : 400).json(outcome);
  }
}
