import {
  applyDecorators,
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
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiExtraModels,
  ApiOperation,
  ApiQuery,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiActivityPage, type ActivityPage } from '../activity/activity-log.presenter';
import { ActivityLogService, toActivityPage } from '../activity/activity-log.service';
import { ActivityPageQueryDto } from '../activity/activity-page-query.dto';
import { RequestUrl } from '../common/request-url.decorator';
import { Access, Caller, AccessContext, requireProject } from '../auth/access.decorator';
import { Page, toPage } from '../common/pagination.util';
import { IntegerIdParam } from '../common/path-params.pipe';
import { projectScoped } from '../routes/project-scoped-paths.util';
import {
  ApiEmptyResponse,
  ApiJsonResponse,
  ApiModelResponse,
  ApiPage,
} from '../schema/api-responses.decorator';
import { ErrorResponse } from '../schema/error-response.dto';
import { CreateFeatureFlagDto, UpdateFeatureFlagDto } from './feature-flag.dto';
import { FeatureFlagResponse } from './feature-flag.presenter';
import { FEATURE_FLAG_SCOPE, FeatureFlagService } from './feature-flag.service';
import { FlagEvaluationQueryDto, FlagListQueryDto, LocalEvaluationQueryDto } from './feature-flag-query.dto';
import {
  DashboardOutcomeResponse,
  type EvaluationReasonsResponse,
  FlagEvaluationReasonResponse,
  LocalEvaluationResponse,
  MyFlagResponse,
  StaticCohortResponse,
  UserBlastRadiusRequest,
  UserBlastRadiusResponse,
} from './feature-flag-actions.presenter';
import { FeatureFlagActionsService } from './feature-flag-actions.service';

const PROJECT = 'project_id';

/** The list's filters (FlagListQueryDto): a value it does not know is no filter, as in PostHog. */
const ApiFlagListFilters = (): MethodDecorator =>
  applyDecorators(
    ApiQuery({ name: 'search', required: false, type: String, description: 'Part of the key or name' }),
    ApiQuery({
      name: 'active',
      required: false,
      enum: ['true', 'false'],
      description: 'Only enabled or disabled flags',
    }),
    ApiQuery({
      name: 'type',
      required: false,
      enum: ['boolean', 'multivariant'],
      description: 'Only boolean or multivariate flags',
    }),
  );

/** `?groups=` of evaluation_reasons and my_flags. */
const ApiGroupsQuery = (): MethodDecorator =>
  ApiQuery({
    name: 'groups',
    required: false,
    type: String,
    description: 'JSON object of group type → group key, such as {"company": "acme"}',
  });

/**
 * dashboard/ and enrich_usage_dashboard/: 200 with {success: true}, or 400 with {success: false,
 * error} when it cannot be done (or the error body for a request that is refused as such).
 */
const ApiDashboardOutcome = (): MethodDecorator =>
  applyDecorators(
    ApiModelResponse(DashboardOutcomeResponse, HttpStatus.OK, { description: '{"success": true}' }),
    ApiExtraModels(DashboardOutcomeResponse, ErrorResponse),
    ApiResponse({
      status: HttpStatus.BAD_REQUEST,
      description: '{"success": false, "error": …}, or a request refused as such',
      schema: {
        oneOf: [{ $ref: getSchemaPath(DashboardOutcomeResponse) }, { $ref: getSchemaPath(ErrorResponse) }],
      },
    }),
  );

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
  @ApiPage(FeatureFlagResponse)
  @ApiFlagListFilters()
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: FlagListQueryDto,
  ): Promise<Page<FeatureFlagResponse>> {
    const { count, results } = await this.flags.list(
      caller.user,
      requireProject(caller),
      query.page,
      query.filters,
    );
    return toPage(url, query.page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Create a flag' })
  @ApiModelResponse(FeatureFlagResponse, HttpStatus.CREATED)
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  create(@Caller() caller: AccessContext, @Body() dto: CreateFeatureFlagDto): Promise<FeatureFlagResponse> {
    return this.flags.create(caller.user, requireProject(caller), dto);
  }

  // Collection actions come before `:id`, which would otherwise take their names.

  @Get('activity')
  @ApiOperation({ summary: 'Changes to every flag of the project, newest first (?page=, ?limit=)' })
  @ApiActivityPage()
  @Access({ scope: 'activity_log:read', projectParam: PROJECT })
  async allActivity(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: ActivityPageQueryDto,
  ): Promise<ActivityPage> {
    const entries = await this.activity.page(query, {
      teamId: requireProject(caller).team.id,
      scope: FEATURE_FLAG_SCOPE,
    });
    return toActivityPage(url, entries);
  }

  @Get('evaluation_reasons')
  @ApiOperation({ summary: 'Each flag’s value and reason for ?distinct_id= (and ?groups=)' })
  @ApiQuery({ name: 'distinct_id', required: true, type: String, description: 'The person to evaluate for' })
  @ApiGroupsQuery()
  @ApiExtraModels(FlagEvaluationReasonResponse)
  @ApiJsonResponse(
    { type: 'object', additionalProperties: { $ref: getSchemaPath(FlagEvaluationReasonResponse) } },
    HttpStatus.OK,
    'Flag key → its value and the reason, for every live flag',
  )
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  evaluationReasons(
    @Caller() caller: AccessContext,
    @Query() query: FlagEvaluationQueryDto,
  ): Promise<EvaluationReasonsResponse> {
    return this.actions.evaluationReasons(requireProject(caller), query);
  }

  @Get('local_evaluation')
  @ApiOperation({
    summary: 'Flag definitions for SDK local evaluation: {flags, group_type_mapping, cohorts}',
  })
  @ApiQuery({
    name: 'send_cohorts',
    required: false,
    type: String,
    description: 'Present (with any value): include the dynamic cohorts the flags use',
  })
  @ApiModelResponse(LocalEvaluationResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  localEvaluation(
    @Caller() caller: AccessContext,
    @Query() query: LocalEvaluationQueryDto,
  ): Promise<LocalEvaluationResponse> {
    return this.actions.localEvaluation(requireProject(caller), query.send_cohorts);
  }

  @Get('my_flags')
  @ApiOperation({ summary: "Every live flag's value for the key's own user" })
  @ApiGroupsQuery()
  @ApiModelResponse(MyFlagResponse, HttpStatus.OK, { isArray: true })
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  myFlags(
    @Caller() caller: AccessContext,
    @Query() query: FlagEvaluationQueryDto,
  ): Promise<MyFlagResponse[]> {
    return this.actions.myFlags(caller.user, requireProject(caller), query);
  }

  @Post('user_blast_radius')
  @HttpCode(200)
  @ApiOperation({ summary: 'How many of the project’s persons (or groups) a condition matches' })
  @ApiBody({ type: UserBlastRadiusRequest })
  @ApiModelResponse(UserBlastRadiusResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  userBlastRadius(@Caller() caller: AccessContext, @Body() body: unknown): Promise<UserBlastRadiusResponse> {
    return this.actions.userBlastRadius(requireProject(caller), body);
  }

  @Get(':id')
  @ApiModelResponse(FeatureFlagResponse)
  @Access({ scope: 'feature_flag:read', projectParam: PROJECT })
  retrieve(@Caller() caller: AccessContext, @IntegerIdParam('id') id: number): Promise<FeatureFlagResponse> {
    return this.flags.retrieve(caller.user, requireProject(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update a flag; {"deleted": true} deletes it (softly)' })
  @ApiModelResponse(FeatureFlagResponse)
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  update(
    @Caller() caller: AccessContext,
    @IntegerIdParam('id') id: number,
    @Body() dto: UpdateFeatureFlagDto,
  ): Promise<FeatureFlagResponse> {
    return this.flags.update(caller.user, requireProject(caller), id, dto);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.METHOD_NOT_ALLOWED)
  @ApiOperation({ summary: 'Refused (405, no body): delete a flag with PATCH {"deleted": true}' })
  @ApiEmptyResponse(HttpStatus.METHOD_NOT_ALLOWED, 'Refused: PATCH {"deleted": true} deletes a flag')
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  remove(@Param('id') _id: string, @Res() response: Response): void {
    response.status(HttpStatus.METHOD_NOT_ALLOWED).setHeader('Allow', 'GET, PATCH, HEAD, OPTIONS').end();
  }

  @Get(':id/activity')
  @ApiOperation({ summary: 'Changes to the flag, newest first (?page=, ?limit=)' })
  @ApiActivityPage()
  @Access({ scope: 'activity_log:read', projectParam: PROJECT })
  async flagActivity(
    @Caller() caller: AccessContext,
    @IntegerIdParam('id') id: number,
    @RequestUrl() url: URL,
    @Query() query: ActivityPageQueryDto,
  ): Promise<ActivityPage> {
    const project = requireProject(caller);
    const flag = await this.flags.find(project, id);
    const entries = await this.activity.page(query, {
      teamId: project.team.id,
      scope: FEATURE_FLAG_SCOPE,
      itemId: String(flag.id),
    });
    return toActivityPage(url, entries);
  }

  @Post(':id/create_static_cohort_for_flag')
  @HttpCode(200)
  @ApiOperation({ summary: 'A static cohort of the persons the flag matches now' })
  @ApiModelResponse(StaticCohortResponse)
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  createStaticCohort(
    @Caller() caller: AccessContext,
    @IntegerIdParam('id') id: number,
  ): Promise<StaticCohortResponse> {
    return this.actions.createStaticCohort(caller.user, requireProject(caller), id);
  }

  @Post(':id/dashboard')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: "(Re)create the flag's usage dashboard" })
  @ApiDashboardOutcome()
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  async dashboard(
    @Caller() caller: AccessContext,
    @IntegerIdParam('id') id: number,
    @Res() response: Response,
  ) {
    const outcome = await this.actions.dashboard(caller.user, requireProject(caller), id);
    response.status(outcome.success ? HttpStatus.OK : HttpStatus.BAD_REQUEST).json(outcome);
  }

  @Post(':id/enrich_usage_dashboard')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: "Add $feature_view / $feature_interaction insights to the flag's usage dashboard",
  })
  @ApiDashboardOutcome()
  @Access({ scope: 'feature_flag:write', projectParam: PROJECT })
  async enrichUsageDashboard(
    @Caller() caller: AccessContext,
    @IntegerIdParam('id') id: number,
    @Res() response: Response,
  ) {
    const outcome = await this.actions.enrichUsageDashboard(caller.user, requireProject(caller), id);
    response.status(outcome.success ? HttpStatus.OK : HttpStatus.BAD_REQUEST).json(outcome);
  }
}
