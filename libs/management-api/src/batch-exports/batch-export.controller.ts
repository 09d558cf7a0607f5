import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  Access,
  Caller,
  type AccessRule,
  AccessContext,
  requireOrganization,
  requireProject,
} from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { UuidOrNullParam, UuidParam } from '../common/path-params.pipe';
import { RequestUrl } from '../common/request-url.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import {
  ApiCursorPage,
  ApiModelResponse,
  ApiNoContent,
  ApiPage,
  cursorPageOf,
} from '../schema/api-responses.decorator';
import { BatchExportRunsService } from './batch-export-runs.service';
import {
  CreateBatchExportDto,
  RunPageQueryDto,
  UnpauseBatchExportDto,
  UpdateBatchExportDto,
} from './batch-export.dto';
import {
  BackfillCreatedResponse,
  BackfillRequest,
  BackfillResponse,
  BatchExportLogsResponse,
  BatchExportResponse,
  BatchExportRunResponse,
  RunCancelledResponse,
} from './batch-export.presenter';
import { BatchExportService, projectScope, type BatchExportScope } from './batch-export.service';

/** Both prefixes: the organization's exports (of the projects the key reaches) and a project's. */
const PARAMS = { organizationParam: 'organization_id', projectParam: 'project_id' } as const;
const READ: AccessRule = { scope: 'batch_export:read', ...PARAMS };
const WRITE: AccessRule = { scope: 'batch_export:write', ...PARAMS };

type BackfillBody = { start_at?: unknown; end_at?: unknown } | undefined;

/** A cursor page that is always the only one (PostHog's envelope for the newest 100 backfills). */
interface SinglePage<T> {
  next: null;
  previous: null;
  results: T[];
}

interface RunPage {
  next: string | null;
  previous: null;
  results: BatchExportRunResponse[];
}

@ApiTags('batch exports')
@Controller(['api/organizations/:organization_id/batch_exports', ...projectScoped('batch_exports')])
export class BatchExportController {
  constructor(
    private readonly exports: BatchExportService,
    private readonly runs: BatchExportRunsService,
  ) {}

  /** The route's project, or every project of the route's organization that the key reaches. */
  private scope(caller: AccessContext): Promise<BatchExportScope> {
    if (caller.team) return Promise.resolve(projectScope(requireProject(caller)));
    return this.exports.organizationScope(requireOrganization(caller), caller.apiKey);
  }

  @Get()
  @ApiOperation({
    summary: 'Batch exports, newest first (of every project the key reaches on the organization prefix)',
  })
  @ApiPage(BatchExportResponse)
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<BatchExportResponse>> {
    const { count, results } = await this.exports.list(await this.scope(caller), query.page);
    return toPage(url, query.page, count, results);
  }

  @Post()
  @ApiOperation({
    summary: "Create; on the organization prefix, of team_id or the organization's only project",
  })
  @ApiModelResponse(BatchExportResponse, HttpStatus.CREATED)
  @Access(WRITE)
  async create(
    @Caller() caller: AccessContext,
    @Body() dto: CreateBatchExportDto,
  ): Promise<BatchExportResponse> {
    return this.exports.create(await this.scope(caller), caller.user.id, dto);
  }

  @Get(':id')
  @ApiModelResponse(BatchExportResponse)
  @Access(READ)
  async retrieve(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<BatchExportResponse> {
    return this.exports.retrieve(await this.scope(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update; a destination config is merged into the stored one (secrets kept)' })
  @ApiModelResponse(BatchExportResponse)
  @Access(WRITE)
  async update(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('id') id: string | null,
    @Body() dto: UpdateBatchExportDto,
  ): Promise<BatchExportResponse> {
    return this.exports.update(await this.scope(caller), id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete (softly): it stops running' })
  @ApiNoContent()
  @Access(WRITE)
  async remove(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<void> {
    await this.exports.remove(await this.scope(caller), id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Pause: no interval runs until unpaused' })
  @ApiModelResponse(BatchExportResponse)
  @Access(WRITE)
  async pause(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<BatchExportResponse> {
    return this.exports.setPausedState(await this.scope(caller), id, true);
  }

  @Post(':id/unpause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume; with {"backfill": true} the intervals skipped while paused run too' })
  @ApiModelResponse(BatchExportResponse)
  @Access(WRITE)
  async unpause(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('id') id: string | null,
    @Body() dto: UnpauseBatchExportDto,
  ): Promise<BatchExportResponse> {
    return this.exports.setPausedState(await this.scope(caller), id, false, dto.backfill ?? false);
  }

  @Post(':id/backfill')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deprecated: backfill start_at…end_at; answers with the batch export' })
  @ApiBody({ type: BackfillRequest, required: false })
  @ApiModelResponse(BatchExportResponse)
  @Access(WRITE)
  async backfill(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('id') id: string | null,
    @Body() body: BackfillBody,
  ): Promise<BatchExportResponse> {
    const scope = await this.scope(caller);
    await this.runs.createBackfill(scope, id, body ?? {});
    return this.exports.retrieve(scope, id);
  }

  @Get(':id/backfills')
  @ApiOperation({ summary: 'The newest 100 backfills, newest first, in one page' })
  @ApiModelResponse(cursorPageOf(BackfillResponse, { previous: true }))
  @Access(READ)
  async listBackfills(
    @Caller() caller: AccessContext,
    @UuidParam('id') id: string,
  ): Promise<SinglePage<BackfillResponse>> {
    const { results } = await this.runs.listBackfills(await this.scope(caller), id);
    return { next: null, previous: null, results };
  }

  @Post(':id/backfills')
  @ApiOperation({ summary: 'One run per interval of start_at…end_at (ISO datetimes with an offset)' })
  @ApiBody({ type: BackfillRequest, required: false })
  @ApiModelResponse(BackfillCreatedResponse, HttpStatus.CREATED)
  @Access(WRITE)
  async createBackfill(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('id') id: string | null,
    @Body() body: BackfillBody,
  ): Promise<BackfillCreatedResponse> {
    const { backfill } = await this.runs.createBackfill(await this.scope(caller), id, body ?? {});
    return { backfill_id: backfill.id };
  }

  @Get(':id/backfills/:backfill_id')
  @ApiModelResponse(BackfillResponse)
  @Access(READ)
  async retrieveBackfill(
    @Caller() caller: AccessContext,
    @UuidParam('id') id: string,
    @UuidParam('backfill_id') backfillId: string,
  ): Promise<BackfillResponse> {
    return this.runs.retrieveBackfill(await this.scope(caller), id, backfillId);
  }

  @Get(':id/runs')
  @ApiOperation({ summary: 'Runs, newest first, 100 a page (?cursor= from next)' })
  @ApiCursorPage(BatchExportRunResponse, { previous: true })
  @Access(READ)
  async listRuns(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @UuidParam('id') id: string,
    @Query() query: RunPageQueryDto,
  ): Promise<RunPage> {
    const page = await this.runs.listRuns(await this.scope(caller), id, query.cursor);
    let next: string | null = null;
    if (page.nextCursor) {
      url.searchParams.set('cursor', page.nextCursor);
      next = url.toString();
    }
    return { next, previous: null, results: page.results };
  }

  @Post(':id/runs/:run_id/retry')
  @HttpCode(200)
  @ApiOperation({ summary: "Run the run's interval again, as a backfill of exactly it" })
  @ApiModelResponse(BackfillCreatedResponse)
  @Access(WRITE)
  async retryRun(
    @Caller() caller: AccessContext,
    @UuidParam('id') id: string,
    @UuidParam('run_id') runId: string,
  ): Promise<BackfillCreatedResponse> {
    return this.runs.retryRun(await this.scope(caller), id, runId);
  }

  @Post(':id/runs/:run_id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a run that has not ended (a 400 once it has)' })
  @ApiModelResponse(RunCancelledResponse)
  @Access(WRITE)
  async cancelRun(
    @Caller() caller: AccessContext,
    @UuidParam('id') id: string,
    @UuidParam('run_id') runId: string,
  ): Promise<RunCancelledResponse> {
    return this.runs.cancelRun(await this.scope(caller), id, runId);
  }

  @Get(':id/logs')
  @ApiOperation({ summary: 'The newest 500 log lines of the export and its runs, newest first' })
  @ApiModelResponse(BatchExportLogsResponse)
  @Access(READ)
  async logs(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<BatchExportLogsResponse> {
    return this.runs.logs(await this.scope(caller), id);
  }
}
