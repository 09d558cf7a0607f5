import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Patch,
  Post,
  Query,
  UseInterceptors,
} from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { MembershipLevel } from '@hogbase/postgres';
import { Access, Caller, type AccessRule, AccessContext, requireProject } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { RequestUrl } from '../common/request-url.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import { ApiModelResponse, ApiNoContent, ApiPage, pageOf } from '../schema/api-responses.decorator';
import { AttachmentChangesOf, PluginConfigFormInterceptor } from './plugin-config-form.interceptor';
import { DEFAULT_LOG_LIMIT, MAX_LOG_LIMIT, PluginLogsQueryDto } from './plugin-config-query.dto';
import type { AttachmentChanges } from './plugin-config-values.util';
import { PluginConfigService } from './plugin-config.service';
import { PluginIdParam, type PluginId } from './plugin-id.pipe';
import { CreatePluginConfigDto, UpdatePluginConfigDto, UpgradePluginConfigDto } from './plugin.dto';
import { PLUGIN_LOG_TYPES, PluginConfigResponse, PluginLogEntryResponse } from './plugin.presenter';

const READ: AccessRule = { scope: 'plugin:read', projectParam: 'project_id' };
/**
 * SECURITY: enabling, configuring and upgrading an app in a project is for organization admins
 * (8), as installing it is (pipeline-app.controller.ts): a config decides which code runs on the
 * project's events with which secrets.
 */
const WRITE: AccessRule = { scope: 'plugin:write', projectParam: 'project_id', level: MembershipLevel.Admin };

const PLUGIN_CONFIGS_PATHS = projectScoped('plugin_configs');

/**
 * The routes that take PostHog's multipart form besides JSON: the app lets that content type
 * through to these only (any other route answers 415 to it).
 */
export const MULTIPART_FORM_ROUTES = PLUGIN_CONFIGS_PATHS.flatMap((path) => [
  { method: 'POST', path: `/${path}` },
  { method: 'PATCH', path: `/${path}/:id` },
]);

@ApiTags('pipeline apps')
@Controller(PLUGIN_CONFIGS_PATHS)
export class PluginConfigController {
  constructor(private readonly configs: PluginConfigService) {}

  @Get()
  @ApiOperation({ summary: "The project's app configs, by order then app" })
  @ApiPage(PluginConfigResponse)
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<PluginConfigResponse>> {
    const { count, results } = await this.configs.list(requireProject(caller), query.page);
    return toPage(url, query.page, count, results);
  }

  @Post()
  @ApiOperation({
    summary:
      'Configures an app for the project; secret values are sealed and never shown again. ' +
      'As a multipart form, `config` is JSON text and files `add_attachment[<key>]` fill attachment fields',
  })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiModelResponse(PluginConfigResponse, HttpStatus.CREATED)
  @Access(WRITE)
  @UseInterceptors(PluginConfigFormInterceptor)
  async create(
    @Caller() caller: AccessContext,
    @Body() dto: CreatePluginConfigDto,
    @AttachmentChangesOf() attachments: AttachmentChanges,
  ): Promise<PluginConfigResponse> {
    return this.configs.create(requireProject(caller), caller.user, dto, attachments);
  }

  @Get(':id')
  @ApiModelResponse(PluginConfigResponse)
  @Access(READ)
  async retrieve(
    @Caller() caller: AccessContext,
    @PluginIdParam('id') id: PluginId,
  ): Promise<PluginConfigResponse> {
    return this.configs.retrieve(requireProject(caller), id);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Secret values omitted or sent back masked keep their stored value. As a multipart form, ' +
      'files `add_attachment[<key>]` replace attachments and fields `remove_attachment[<key>]` delete them',
  })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiModelResponse(PluginConfigResponse)
  @Access(WRITE)
  @UseInterceptors(PluginConfigFormInterceptor)
  async update(
    @Caller() caller: AccessContext,
    @PluginIdParam('id') id: PluginId,
    @Body() dto: UpdatePluginConfigDto,
    @AttachmentChangesOf() attachments: AttachmentChanges,
  ): Promise<PluginConfigResponse> {
    return this.configs.update(requireProject(caller), caller.user, id, dto, attachments);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a config: the app stops running in the project' })
  @ApiNoContent()
  @Access(WRITE)
  async remove(@Caller() caller: AccessContext, @PluginIdParam('id') id: PluginId): Promise<void> {
    await this.configs.remove(requireProject(caller), caller.user, id);
  }

  @Post(':id/upgrade')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Moves a config of another organization's app (code_pinned_at set) to the app's current code, " +
      'site code and config schema; a config of an own app follows the latest code and is answered as it is',
  })
  @ApiModelResponse(PluginConfigResponse)
  @Access(WRITE)
  async upgrade(
    @Caller() caller: AccessContext,
    @PluginIdParam('id') id: PluginId,
    @Body() _dto: UpgradePluginConfigDto,
  ): Promise<PluginConfigResponse> {
    return this.configs.upgrade(requireProject(caller), caller.user, id);
  }

  @Get(':id/logs')
  @ApiOperation({ summary: 'Log lines, newest first, a page at a time' })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1 },
    description: `Page size: ${DEFAULT_LOG_LIMIT} by default, at most ${MAX_LOG_LIMIT} (a larger one is capped)`,
  })
  @ApiQuery({
    name: 'offset',
    required: false,
    schema: { type: 'integer', minimum: 0 },
    description: 'Lines to skip (0 by default)',
  })
  @ApiQuery({
    name: 'type_filter',
    required: false,
    schema: { type: 'array', items: { type: 'string', enum: PLUGIN_LOG_TYPES } },
    style: 'form',
    explode: true,
    description: 'Only lines of these levels: repeated, or as a comma list',
  })
  @ApiQuery({ name: 'search', required: false, type: String, description: 'Text the message contains' })
  @ApiQuery({ name: 'after', required: false, schema: { type: 'string', format: 'date-time' } })
  @ApiQuery({ name: 'before', required: false, schema: { type: 'string', format: 'date-time' } })
  @ApiModelResponse(pageOf(PluginLogEntryResponse), HttpStatus.OK, {
    description: 'One page of the lines the filters keep (`count` of them all)',
  })
  @Access(READ)
  async logs(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @PluginIdParam('id') id: PluginId,
    @Query() query: PluginLogsQueryDto,
  ): Promise<Page<PluginLogEntryResponse>> {
    const { page, count, results } = await this.configs.logs(requireProject(caller), id, query);
    return toPage(url, page, count, results);
  }
}
