import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller, type AccessRule } from '../auth/access.decorator';
import { AccessContext, requireOrganization, requireProject } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { publicRequestUrl } from '../common/public-url.util';
import { projectScoped } from '../routes/project-scoped-paths';
import { BatchExportRunsService } from './batch-export-runs.service';
import { CreateBatchExportDto, UnpauseBatchExportDto, UpdateBatchExportDto } from './batch-export.dto';
import { BatchExportService, projectScope, type BatchExportScope } from './batch-export.service';

/** Both prefixes: the organization's exports (of the projects the key reaches) and a project's. */
const PARAMS = { organizationParam: 'organization_id', projectParam: 'project_id' } as const;
const READ: AccessRule = { scope: 'batch_export:read', ...PARAMS };
const WRITE: AccessRule = { scope: 'batch_export:write', ...PARAMS };

type BackfillBody = { start_at?: unknown; end_at?: unknown } | undefined;

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
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const page = pageRequestFrom(query);
    const { count, results } = await this.exports.list(await this.scope(caller), page);
    return toPage(request, page, count, results);
  }

  @Post()
  @ApiOperation({
    summary: "Create; on the organization prefix, of team_id or the organization's only project",
  })
  @Access(WRITE)
  async create(@Caller() caller: AccessContext, @Body() dto: CreateBatchExportDto) {
    return this.exports.create(await this.scope(caller), caller.user.id, dto);
  }

  @Get(':id')
  @Access(READ)
  async retrieve(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.exports.retrieve(await this.scope(caller), id);
  }

  @Patch(':id')
  @Access(WRITE)
  async update(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UpdateBatchExportDto) {
    return this.exports.update(await this.scope(caller), id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access(WRITE)
  async remove(@Caller() caller: AccessContext, @Param('id') id: string): Promise<void> {
    await this.exports.remove(await this.scope(caller), id);
  }

  @Post(':id/pause')
  @HttpCode(200)
  @Access(WRITE)
  async pause(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.exports.setPausedState(await this.scope(caller), id, true);
  }

  @Post(':id/unpause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume; with {"backfill": true} the intervals skipped while paused run too' })
  @Access(WRITE)
  async unpause(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Body() dto: UnpauseBatchExportDto,
  ) {
    return this.exports.setPausedState(await this.scope(caller), id, false, dto.backfill ?? false);
  }

  @Post(':id/backfill')
  @HttpCode(200)
  @ApiOperation({ summary: 'Deprecated: backfill start_at…end_at; answers with the batch export' })
  @Access(WRITE)
  async backfill(@Caller() caller: AccessContext, @Param('id') id: string, @Body() body: BackfillBody) {
    const scope = await this.scope(caller);
    await this.runs.createBackfill(scope, id, body ?? {});
    return this.exports.retrieve(scope, id);
  }

  @Get(':id/backfills')
  @Access(READ)
  async listBackfills(@Caller() caller: AccessContext, @Param('id') id: string) {
    const { results } = await this.runs.listBackfills(await this.scope(caller), id);
    return { next: null, previous: null, results };
  }

  @Post(':id/backfills')
  @ApiOperation({ summary: 'One run per interval of start_at…end_at (ISO datetimes with an offset)' })
  @Access(WRITE)
  async createBackfill(@Caller() caller: AccessContext, @Param('id') id: string, @Body() body: BackfillBody) {
    const { backfill } = await this.runs.createBackfill(await this.scope(caller), id, body ?? {});
    return { backfill_id: backfill.id };
  }

  @Get(':id/backfills/:backfill_id')
  @Access(READ)
  async retrieveBackfill(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Param('backfill_id') backfillId: string,
  ) {
    return this.runs.retrieveBackfill(await this.scope(caller), id, backfillId);
  }

  @Get(':id/runs')
  @ApiOperation({ summary: 'Runs, newest first, 100 a page (?cursor= from next)' })
  @Access(READ)
  async listRuns(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
    @Query('cursor') cursor: unknown,
  ) {
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
    return { next, previous: null, results: page.results };
  }

  @Post(':id/runs/:run_id/retry')
  @HttpCode(200)
  @Access(WRITE)
  async retryRun(@Caller() caller: AccessContext, @Param('id') id: string, @Param('run_id') runId: string) {
    return this.runs.retryRun(await this.scope(caller), id, runId);
  }

  @Post(':id/runs/:run_id/cancel')
  @HttpCode(200)
  @Access(WRITE)
  async cancelRun(@Caller() caller: AccessContext, @Param('id') id: string, @Param('run_id') runId: string) {
    return this.runs.cancelRun(await this.scope(caller), id, runId);
  }

  @Get(':id/logs')
  @Access(READ)
  async logs(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.runs.logs(await this.scope(caller), id);
  }
}
