import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireOrganization, requireProject } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { publicRequestUrl } from '../common/public-url.util';
import { CreateBatchExportDto, UnpauseBatchExportDto, UpdateBatchExportDto } from './batch-export.dto';
import { BatchExportRunsService } from './batch-export-runs.service';
import { BatchExportService, projectScope, type BatchExportScope } from './batch-export.service';

const ORGANIZATION = 'organization_id';
const PROJECT = 'project_id';
const READ = 'batch_export:read';
const WRITE = 'batch_export:write';

/**
 * The routes of both prefixes, over a scope: the organization's projects (those the key may
 * reach) or the route's project.
 */
abstract class BatchExportRoutes {
  constructor(
    protected readonly exports: BatchExportService,
    protected readonly runs: BatchExportRunsService,
  ) {}

  protected abstract scope(caller: AccessContext): Promise<BatchExportScope>;

  protected async listIn(caller: AccessContext, request: Request, query: Record<string, unknown>) {
    const page = pageRequestFrom(query);
    const { count, results } = await this.exports.list(await this.scope(caller), page);
    return toPage(request, page, count, results);
  }

  protected async createIn(caller: AccessContext, dto: CreateBatchExportDto) {
    return this.exports.create(await this.scope(caller), caller.user.id, dto);
  }

  protected async retrieveIn(caller: AccessContext, id: string) {
    return this.exports.retrieve(await this.scope(caller), id);
  }

  protected async updateIn(caller: AccessContext, id: string, dto: UpdateBatchExportDto) {
    return this.exports.update(await this.scope(caller), id, dto);
  }

  protected async removeIn(caller: AccessContext, id: string) {
    await this.exports.remove(await this.scope(caller), id);
  }

  protected async pauseIn(caller: AccessContext, id: string) {
    return this.exports.setPausedState(await this.scope(caller), id, true);
  }

  protected async unpauseIn(caller: AccessContext, id: string, dto: UnpauseBatchExportDto) {
    return this.exports.setPausedState(await this.scope(caller), id, false, dto.backfill ?? false);
  }

  /** The deprecated `backfill` action: the spec answers with the batch export. */
  protected async backfillIn(caller: AccessContext, id: string, body: BackfillBody) {
    const scope = await this.scope(caller);
    await this.runs.createBackfill(scope, id, body ?? {});
    return this.exports.retrieve(scope, id);
  }

  protected async createBackfillIn(caller: AccessContext, id: string, body: BackfillBody) {
    const { backfill } = await this.runs.createBackfill(await this.scope(caller), id, body ?? {});
    return { backfill_id: backfill.id };
  }

  protected async listBackfillsIn(caller: AccessContext, id: string) {
    const { results } = await this.runs.listBackfills(await this.scope(caller), id);
    return { next: null, previous: null, results };
  }

  protected async retrieveBackfillIn(caller: AccessContext, id: string, backfillId: string) {
    return this.runs.retrieveBackfill(await this.scope(caller), id, backfillId);
  }

  protected async listRunsIn(caller: AccessContext, request: Request, id: string, cursor: unknown) {
    const page = await this.runs.listRuns(
      await this.scope(caller),
      id,
      typeof cursor === 'string' && cursor !== '' ? cursor : undefined,
    );
    let next: string | null = null;
    if (page.nextCursor) {
      const url = publicRequestUrl(request);
      url.searchParams.set('cursor', page.nextCursor);
      next = url.toString();
    }
    return {
      next,
      previous: null,
      results: page.results,
    };
  }

  protected async retryRunIn(caller: AccessContext, id: string, runId: string) {
    return this.runs.retryRun(await this.scope(caller), id, runId);
  }

  protected async cancelRunIn(caller: AccessContext, id: string, runId: string) {
    return this.runs.cancelRun(await this.scope(caller), id, runId);
  }

  protected async logsIn(caller: AccessContext, id: string) {
    return this.runs.logs(await this.scope(caller), id);
  }
}

type BackfillBody = { start_at?: unknown; end_at?: unknown } | undefined;

@ApiTags('batch exports')
@Controller('api/organizations/:organization_id/batch_exports')
export class OrganizationBatchExportController extends BatchExportRoutes {
  constructor(exports: BatchExportService, runs: BatchExportRunsService) {
    super(exports, runs);
  }

  protected scope(caller: AccessContext): Promise<BatchExportScope> {
    return this.exports.organizationScope(requireOrganization(caller), caller.apiKey);
  }

  @Get()
  @ApiOperation({
    summary: 'The batch exports of every project of the organization the key reaches, newest first',
  })
  @Access({ scope: READ, organizationParam: ORGANIZATION })
  list(@Caller() caller: AccessContext, @Req() request: Request, @Query() query: Record<string, unknown>) {
    return this.listIn(caller, request, query);
  }

  @Post()
  @ApiOperation({
    summary: "Create a batch export of one project: team_id, or the organization's only project",
  })
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  create(@Caller() caller: AccessContext, @Body() dto: CreateBatchExportDto) {
    return this.createIn(caller, dto);
  }

  @Get(':id')
  @Access({ scope: READ, organizationParam: ORGANIZATION })
  retrieve(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.retrieveIn(caller, id);
  }

  @Patch(':id')
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  update(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UpdateBatchExportDto) {
    return this.updateIn(caller, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  remove(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.removeIn(caller, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  pause(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.pauseIn(caller, id);
  }

  @Post(':id/unpause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume; with {"backfill": true} the intervals skipped while paused run too' })
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  unpause(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UnpauseBatchExportDto) {
    return this.unpauseIn(caller, id, dto);
  }

  @Post(':id/backfill')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deprecated: backfill start_at…end_at; answers with the batch export' })
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  backfill(@Caller() caller: AccessContext, @Param('id') id: string, @Body() body: BackfillBody) {
    return this.backfillIn(caller, id, body);
  }

  @Get(':id/backfills')
  @Access({ scope: READ, organizationParam: ORGANIZATION })
  listBackfills(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.listBackfillsIn(caller, id);
  }

  @Post(':id/backfills')
  @ApiOperation({ summary: 'One run per interval of start_at…end_at (ISO datetimes with an offset)' })
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  createBackfill(@Caller() caller: AccessContext, @Param('id') id: string, @Body() body: BackfillBody) {
    return this.createBackfillIn(caller, id, body);
  }

  @Get(':id/backfills/:backfill_id')
  @Access({ scope: READ, organizationParam: ORGANIZATION })
  retrieveBackfill(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Param('backfill_id') backfillId: string,
  ) {
    return this.retrieveBackfillIn(caller, id, backfillId);
  }

  @Get(':id/runs')
  @ApiOperation({ summary: 'Runs, newest first, 100 a page (?cursor= from next)' })
  @Access({ scope: READ, organizationParam: ORGANIZATION })
  listRuns(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
    @Query('cursor') cursor: unknown,
  ) {
    return this.listRunsIn(caller, request, id, cursor);
  }

  @Post(':id/runs/:run_id/retry')
  @HttpCode(200)
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  retryRun(@Caller() caller: AccessContext, @Param('id') id: string, @Param('run_id') runId: string) {
    return this.retryRunIn(caller, id, runId);
  }

  @Post(':id/runs/:run_id/cancel')
  @HttpCode(200)
  @Access({ scope: WRITE, organizationParam: ORGANIZATION })
  cancelRun(@Caller() caller: AccessContext, @Param('id') id: string, @Param('run_id') runId: string) {
    return this.cancelRunIn(caller, id, runId);
  }

  @Get(':id/logs')
  @Access({ scope: READ, organizationParam: ORGANIZATION })
  logs(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.logsIn(caller, id);
  }
}

@ApiTags('batch exports')
@Controller('api/projects/:project_id/batch_exports')
export class ProjectBatchExportController extends BatchExportRoutes {
  constructor(exports: BatchExportService, runs: BatchExportRunsService) {
    super(exports, runs);
  }

  protected scope(caller: AccessContext): Promise<BatchExportScope> {
    return Promise.resolve(projectScope(requireProject(caller)));
  }

  @Get()
  @Access({ scope: READ, projectParam: PROJECT })
  list(@Caller() caller: AccessContext, @Req() request: Request, @Query() query: Record<string, unknown>) {
    return this.listIn(caller, request, query);
  }

  @Post()
  @Access({ scope: WRITE, projectParam: PROJECT })
  create(@Caller() caller: AccessContext, @Body() dto: CreateBatchExportDto) {
    return this.createIn(caller, dto);
  }

  @Get(':id')
  @Access({ scope: READ, projectParam: PROJECT })
  retrieve(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.retrieveIn(caller, id);
  }

  @Patch(':id')
  @Access({ scope: WRITE, projectParam: PROJECT })
  update(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UpdateBatchExportDto) {
    return this.updateIn(caller, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access({ scope: WRITE, projectParam: PROJECT })
  remove(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.removeIn(caller, id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Access({ scope: WRITE, projectParam: PROJECT })
  pause(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.pauseIn(caller, id);
  }

  @Post(':id/unpause')
  @HttpCode(200)
  @Access({ scope: WRITE, projectParam: PROJECT })
  unpause(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UnpauseBatchExportDto) {
    return this.unpauseIn(caller, id, dto);
  }

  @Post(':id/backfill')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deprecated: backfill start_at…end_at; answers with the batch export' })
  @Access({ scope: WRITE, projectParam: PROJECT })
  backfill(@Caller() caller: AccessContext, @Param('id') id: string, @Body() body: BackfillBody) {
    return this.backfillIn(caller, id, body);
  }

  @Get(':id/backfills')
  @Access({ scope: READ, projectParam: PROJECT })
  listBackfills(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.listBackfillsIn(caller, id);
  }

  @Post(':id/backfills')
  @ApiOperation({ summary: 'One run per interval of start_at…end_at (ISO datetimes with an offset)' })
  @Access({ scope: WRITE, projectParam: PROJECT })
  createBackfill(@Caller() caller: AccessContext, @Param('id') id: string, @Body() body: BackfillBody) {
    return this.createBackfillIn(caller, id, body);
  }

  @Get(':id/backfills/:backfill_id')
  @Access({ scope: READ, projectParam: PROJECT })
  retrieveBackfill(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Param('backfill_id') backfillId: string,
  ) {
    return this.retrieveBackfillIn(caller, id, backfillId);
  }

  @Get(':id/runs')
  @ApiOperation({ summary: 'Runs, newest first, 100 a page (?cursor= from next)' })
  @Access({ scope: READ, projectParam: PROJECT })
  listRuns(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
    @Query('cursor') cursor: unknown,
  ) {
    return this.listRunsIn(caller, request, id, cursor);
  }

  @Post(':id/runs/:run_id/retry')
  @HttpCode(200)
  @Access({ scope: WRITE, projectParam: PROJECT })
  retryRun(@Caller() caller: AccessContext, @Param('id') id: string, @Param('run_id') runId: string) {
    return this.retryRunIn(caller, id, runId);
  }

  @Post(':id/runs/:run_id/cancel')
  @HttpCode(200)
  @Access({ scope: WRITE, projectParam: PROJECT })
  cancelRun(@Caller() caller: AccessContext, @Param('id') id: string, @Param('run_id') runId: string) {
    return this.cancelRunIn(caller, id, runId);
  }

  @Get(':id/logs')
  @Access({ scope: READ, projectParam: PROJECT })
  logs(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.logsIn(caller, id);
  }
}
