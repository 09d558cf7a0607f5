import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller, type AccessRule } from '../auth/access.decorator';
import { AccessContext, requireProject } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { PluginConfigService } from './plugin-config.service';
import { CreatePluginConfigDto, UpdatePluginConfigDto } from './plugin.dto';

const READ: AccessRule = { scope: 'plugin:read', projectParam: 'project_id' };
const WRITE: AccessRule = { scope: 'plugin:write', projectParam: 'project_id' };

@ApiTags('pipeline apps')
@Controller('api/projects/:project_id/plugin_configs')
export class PluginConfigController {
  constructor(private readonly configs: PluginConfigService) {}

  @Get()
  @ApiOperation({ summary: "The project's app configs, by order then app" })
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const page = pageRequestFrom(query);
    const { count, results } = await this.configs.list(requireProject(caller), page);
    return toPage(request, page, count, results);
  }

  @Post()
  @ApiOperation({
    summary: 'Configures an app for the project; secret values are sealed and never shown again',
  })
  @Access(WRITE)
  async create(@Caller() caller: AccessContext, @Body() dto: CreatePluginConfigDto) {
    return this.configs.create(requireProject(caller), caller.user, dto);
  }

  @Get(':id')
  @Access(READ)
  async retrieve(@Caller() caller: AccessContext, @Param('id') id: string) {
    return this.configs.retrieve(requireProject(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Secret values omitted or sent back masked keep their stored value' })
  @Access(WRITE)
  async update(@Caller() caller: AccessContext, @Param('id') id: string, @Body() dto: UpdatePluginConfigDto) {
    return this.configs.update(requireProject(caller), caller.user, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access(WRITE)
  async remove(@Caller() caller: AccessContext, @Param('id') id: string): Promise<void> {
    await this.configs.remove(requireProject(caller), caller.user, id);
  }

  @Get(':id/logs')
  @ApiOperation({ summary: 'Log lines, newest first (?limit=, ?type_filter=, ?search=, ?after=, ?before=)' })
  @Access(READ)
  async logs(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.configs.logs(requireProject(caller), id, query);
  }
}
