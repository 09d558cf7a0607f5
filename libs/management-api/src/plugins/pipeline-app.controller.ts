import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request } from 'express';
import { MembershipLevel } from '@hogbase/postgres';
import { Access, Caller, type AccessRule } from '../auth/access.decorator';
import { AccessContext, requireOrganization } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { ApiValidationPipe } from '../common/validation.pipe';
import { collectionOfPath } from './pipeline-collections';
import { assertPluginAccess } from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { PluginCatalogService } from './plugin-catalog.service';
import { PluginConfigService } from './plugin-config.service';
import { PluginSourceService, updateSourceBody } from './plugin-source.service';
import { CreatePipelineAppDto, UpdatePipelineAppDto, UpgradePipelineAppDto } from './plugin.dto';
import { PluginService } from './plugin.service';

const READ: AccessRule = { scope: 'plugin:read', organizationParam: 'organization_id' };
/**
 * SECURITY: installing, editing, upgrading and uninstalling an app is for organization admins (8):
 * its code runs with the (masked) secrets of every config of the app in the organization. PostHog's
 * PluginViewSet asks the organization's plugins_access_level (PluginsAccessLevelPermission,
 * posthog/api/plugin.py) of any member; here a member's key keeps reads only.
 */
const WRITE: AccessRule = {
  scope: 'plugin:write',
  organizationParam: 'organization_id',
  level: MembershipLevel.Admin,
};

const COLLECTION_PATHS = {
  pipeline_transformations: 'api/organizations/:organization_id/pipeline_transformations',
  pipeline_destinations: 'api/organizations/:organization_id/pipeline_destinations',
  pipeline_frontend_apps: 'api/organizations/:organization_id/pipeline_frontend_apps',
  pipeline_import_apps: 'api/organizations/:organization_id/pipeline_import_apps',
} as const;

/** update_source's fields are checked as PATCH :id/'s body is, by the global pipe's rules. */
const BODY_VALIDATION = new ApiValidationPipe();

function organizationOf(caller: AccessContext) {
  return requireOrganization(caller).organization;
}

/**
 * Pipeline transformations, destinations and frontend apps: the actions beyond the five routes
 * every collection has.
 * TRICKY: the management module lists this controller before PipelineAppController, so that
 * `activity`, `unused`, ... are routed here before `GET :id` would take their names.
 */
@ApiTags('pipeline apps')
@Controller([
  COLLECTION_PATHS.pipeline_transformations,
  COLLECTION_PATHS.pipeline_destinations,
  COLLECTION_PATHS.pipeline_frontend_apps,
])
export class PipelineAppActionController {
  constructor(
    private readonly plugins: PluginService,
    private readonly sources: PluginSourceService,
    private readonly configs: PluginConfigService,
    private readonly catalog: PluginCatalogService,
    private readonly activity: PluginActivityService,
  ) {}

  @Get('activity')
  @ApiOperation({ summary: "The organization's activity of apps and their configs (?page=, ?limit=)" })
  @Access(READ)
  async activityPage(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const organization = organizationOf(caller);
    assertPluginAccess(organization, false);
    return this.activity.page(request, query, organization);
  }

  @Get('exports_unsubscribe_configs')
  @ApiOperation({
    summary: 'Enabled configs of export apps in the organization (what a migration must replace)',
  })
  @Access(READ)
  async exportsUnsubscribeConfigs(@Caller() caller: AccessContext) {
    return this.configs.exportsUnsubscribeConfigs(organizationOf(caller));
  }

  @Get('repository')
  @ApiOperation({ summary: 'The apps catalog (APPS_REPOSITORY_URL, or the list bundled with the server)' })
  @Access(READ)
  async repository() {
    return this.catalog.list();
  }

  @Get('unused')
  @ApiOperation({ summary: 'Ids of the apps no project has enabled' })
  @Access(READ)
  async unused(@Caller() caller: AccessContext) {
    return this.plugins.unused(organizationOf(caller));
  }

  @Get(':id/check_for_updates')
  @ApiOperation({ summary: "Fetches the latest version of the app's source; answers {plugin}" })
  @Access(READ)
  async checkForUpdates(@Caller() caller: AccessContext, @Req() request: Request, @Param('id') id: string) {
    return this.sources.checkForUpdates(organizationOf(caller), collectionOfPath(request.path), id);
  }

  @Get(':id/source')
  @ApiOperation({ summary: "The app's files: {filename: source}" })
  @Access(READ)
  async source(@Caller() caller: AccessContext, @Req() request: Request, @Param('id') id: string) {
    return this.sources.source(organizationOf(caller), collectionOfPath(request.path), id);
  }

  @Patch(':id/update_source')
  @ApiOperation({
    summary:
      "The app's writable fields (as PATCH :id/, answering the app), or files ({filename: source | null}; " +
      'null deletes; a file name has an extension), written and built again (answering the files)',
  })
  @ApiExtraModels(UpdatePipelineAppDto)
  @ApiBody({
    schema: {
      anyOf: [
        { $ref: getSchemaPath(UpdatePipelineAppDto) },
        { type: 'object', additionalProperties: { type: 'string', nullable: true } },
      ],
    },
  })
  @Access(WRITE)
  async updateSource(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
    @Body() body: unknown,
  ) {
    const collection = collectionOfPath(request.path);
    const parsed = updateSourceBody(body);
    if (parsed.kind === 'fields') {
      const dto = (await BODY_VALIDATION.transform(body, {
        type: 'body',
        metatype: UpdatePipelineAppDto,
      })) as UpdatePipelineAppDto;
      return this.plugins.update(organizationOf(caller), collection, id, caller.user, dto);
    }
    return this.sources.updateSource(organizationOf(caller), collection, id, caller.user, parsed.changes);
  }

  @Post(':id/upgrade')
  @HttpCode(200)
  @ApiOperation({ summary: 'Downloads the app again from its URL (local: reads its folder again)' })
  @Access(WRITE)
  async upgrade(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
    @Body() _dto: UpgradePipelineAppDto,
  ) {
    return this.sources.upgrade(organizationOf(caller), collectionOfPath(request.path), id, caller.user);
  }
}

/**
 * The five routes of every collection: one app resource, each collection showing the apps its
 * capabilities filter keeps and those created through it (another app is 404 there; create accepts any app).
 */
@ApiTags('pipeline apps')
@Controller(Object.values(COLLECTION_PATHS))
export class PipelineAppController {
  constructor(private readonly plugins: PluginService) {}

  @Get()
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const page = pageRequestFrom(query);
    const { count, results } = await this.plugins.list(
      organizationOf(caller),
      collectionOfPath(request.path),
      page,
    );
    return toPage(request, page, count, results);
  }

  @Post()
  @ApiOperation({
    summary: 'Install: plugin_type source (name only), or a url (file:, archive, GitHub, GitLab, npm)',
  })
  @Access(WRITE)
  async create(@Caller() caller: AccessContext, @Req() request: Request, @Body() dto: CreatePipelineAppDto) {
    return this.plugins.create(organizationOf(caller), collectionOfPath(request.path), caller.user, dto);
  }

  @Get(':id')
  @Access(READ)
  async retrieve(@Caller() caller: AccessContext, @Req() request: Request, @Param('id') id: string) {
    return this.plugins.retrieve(organizationOf(caller), collectionOfPath(request.path), id);
  }

  @Patch(':id')
  @Access(WRITE)
  async update(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
    @Body() dto: UpdatePipelineAppDto,
  ) {
    return this.plugins.update(organizationOf(caller), collectionOfPath(request.path), id, caller.user, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access(WRITE)
  async remove(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Param('id') id: string,
  ): Promise<void> {
    await this.plugins.remove(organizationOf(caller), collectionOfPath(request.path), id, caller.user);
  }
}
