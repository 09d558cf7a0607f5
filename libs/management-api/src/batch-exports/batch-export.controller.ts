import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireOrganization, requireProject } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { CreateBatchExportDto, UnpauseBatchExportDto, UpdateBatchExportDto } from './batch-export.dto';
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
  constructor(protected readonly exports: BatchExportService) {}

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
}

@ApiTags('batch exports')
@Controller('api/organizations/:organization_id/batch_exports')
export class OrganizationBatchExportController extends BatchExportRoutes {
  constructor(exports: BatchExportService) {
    super(exports);
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
}

@ApiTags('batch exports')
@Controller('api/projects/:project_id/batch_exports')
export class ProjectBatchExportController extends BatchExportRoutes {
  constructor(exports: BatchExportService) {
    super(exports);
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
}
