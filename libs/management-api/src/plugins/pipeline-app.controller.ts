import {
  Body,
  Controller,
  createParamDecorator,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Patch,
  Post,
  Query,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request } from 'express';
import { MembershipLevel } from '@hogbase/postgres';
import { ApiActivityPage, type ActivityPage } from '../activity/activity-log.presenter';
import { toActivityPage } from '../activity/activity-log.service';
import { ActivityPageQueryDto } from '../activity/activity-page-query.dto';
import {
  Access,
  Caller,
  type AccessRule,
  AccessContext,
  requireOrganization,
} from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { RequestUrl } from '../common/request-url.decorator';
import { ApiValidationPipe } from '../common/validation.pipe';
import {
  ApiJsonResponse,
  ApiModelResponse,
  ApiNoContent,
  ApiPage,
  FREE_FORM_ARRAY,
} from '../schema/api-responses.decorator';
import { collectionOfPath, type PipelineCollection } from './pipeline-collections.util';
import { assertPluginAccess } from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { PluginCatalogService } from './plugin-catalog.service';
import { PluginConfigService } from './plugin-config.service';
import { PluginIdParam, type PluginId } from './plugin-id.pipe';
import { PluginSourceService, updateSourceBody } from './plugin-source.service';
import { CreatePipelineAppDto, UpdatePipelineAppDto, UpgradePipelineAppDto } from './plugin.dto';
import {
  PipelineAppResponse,
  PluginConfigResponse,
  PluginUpdateCheckResponse,
  SOURCE_FILES_SCHEMA,
} from './plugin.presenter';
import { PluginService } from './plugin.service';

const READ: AccessRule = { scope: 'plugin:read', organizationParam: 'organization_id' };
/**
 * SECURITY: app writes are for organization admins: an app's code runs with the secrets of every
 * config of it in the organization. PostHog asks only plugins_access_level (posthog/api/plugin.py).
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

const Collection = createParamDecorator((_data: unknown, context: ExecutionContext): PipelineCollection =>
  collectionOfPath(context.switchToHttp().getRequest<Request>().path),
);

/**
 * The actions beyond the five routes every collection has. Listed before PipelineAppController in
 * the module, so that `activity`, `unused`, ... are routed before `GET :id` takes their names.
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
  @ApiActivityPage()
  @Access(READ)
  async activityPage(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: ActivityPageQueryDto,
  ): Promise<ActivityPage> {
    const organization = organizationOf(caller);
    assertPluginAccess(organization, false);
    return toActivityPage(url, await this.activity.page(query, organization));
  }

  @Get('exports_unsubscribe_configs')
  @ApiOperation({
    summary: 'Enabled configs of export apps in the organization (what a migration must replace)',
  })
  @ApiModelResponse(PluginConfigResponse, HttpStatus.OK, { isArray: true })
  @Access(READ)
  async exportsUnsubscribeConfigs(@Caller() caller: AccessContext): Promise<PluginConfigResponse[]> {
    return this.configs.exportsUnsubscribeConfigs(organizationOf(caller));
  }

  @Get('repository')
  @ApiOperation({ summary: 'The apps catalog (APPS_REPOSITORY_URL, or the list bundled with the server)' })
  @ApiJsonResponse({
    ...FREE_FORM_ARRAY,
    description: "PostHog's plugins.json entries: {name, url, description, icon, verified, maintainer, type}",
  })
  @Access(READ)
  async repository(): Promise<unknown[]> {
    return this.catalog.list();
  }

  @Get('unused')
  @ApiOperation({ summary: 'Ids of the apps no project has enabled' })
  @ApiJsonResponse({ type: 'array', items: { type: 'integer' } })
  @Access(READ)
  async unused(@Caller() caller: AccessContext): Promise<number[]> {
    return this.plugins.unused(organizationOf(caller));
  }

  @Get(':id/check_for_updates')
  @ApiOperation({ summary: "Fetches the latest version of the app's source; answers {plugin}" })
  @ApiModelResponse(PluginUpdateCheckResponse)
  @Access(READ)
  async checkForUpdates(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
  ): Promise<PluginUpdateCheckResponse> {
    return this.sources.checkForUpdates(organizationOf(caller), collection, id);
  }

  @Get(':id/source')
  @ApiOperation({ summary: "The app's files: {filename: source}" })
  @ApiJsonResponse(SOURCE_FILES_SCHEMA)
  @Access(READ)
  async source(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
  ): Promise<Record<string, string | null>> {
    return this.sources.source(organizationOf(caller), collection, id);
  }

  @Patch(':id/update_source')
  @ApiOperation({
    summary:
      "The app's writable fields (as PATCH :id/, answering the app), or files ({filename: source | null}; " +
      'null deletes; a file name has an extension), written and built again (answering the files)',
  })
  @ApiExtraModels(UpdatePipelineAppDto, PipelineAppResponse)
  @ApiBody({
    schema: {
      anyOf: [
        { $ref: getSchemaPath(UpdatePipelineAppDto) },
        { type: 'object', additionalProperties: { type: 'string', nullable: true } },
      ],
      description:
        "The app's writable fields, or its files by name (a name with an extension; null deletes the file): not both",
    },
  })
  @ApiJsonResponse(
    { oneOf: [{ $ref: getSchemaPath(PipelineAppResponse) }, SOURCE_FILES_SCHEMA] },
    HttpStatus.OK,
    'The app (for its fields), or its files after the change (for files)',
  )
  @Access(WRITE)
  async updateSource(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
    @Body() body: unknown,
  ): Promise<PipelineAppResponse | Record<string, string | null>> {
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
  @ApiModelResponse(PipelineAppResponse)
  @Access(WRITE)
  async upgrade(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
    @Body() _dto: UpgradePipelineAppDto,
  ): Promise<PipelineAppResponse> {
    return this.sources.upgrade(organizationOf(caller), collection, id, caller.user);
  }
}

/** Each collection shows the apps its capabilities filter keeps and those created through it. */
@ApiTags('pipeline apps')
@Controller(Object.values(COLLECTION_PATHS))
export class PipelineAppController {
  constructor(private readonly plugins: PluginService) {}

  @Get()
  @ApiOperation({ summary: "The collection's apps of the organization (and global ones)" })
  @ApiPage(PipelineAppResponse)
  @Access(READ)
  async list(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<PipelineAppResponse>> {
    const { count, results } = await this.plugins.list(organizationOf(caller), collection, query.page);
    return toPage(url, query.page, count, results);
  }

  @Post()
  @ApiOperation({
    summary: 'Install: plugin_type source (name only), or a url (file:, archive, GitHub, GitLab, npm)',
  })
  @ApiModelResponse(PipelineAppResponse, HttpStatus.CREATED)
  @Access(WRITE)
  async create(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @Body() dto: CreatePipelineAppDto,
  ): Promise<PipelineAppResponse> {
    return this.plugins.create(organizationOf(caller), collection, caller.user, dto);
  }

  @Get(':id')
  @ApiModelResponse(PipelineAppResponse)
  @Access(READ)
  async retrieve(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
  ): Promise<PipelineAppResponse> {
    return this.plugins.retrieve(organizationOf(caller), collection, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: "Update an app's writable fields" })
  @ApiModelResponse(PipelineAppResponse)
  @Access(WRITE)
  async update(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
    @Body() dto: UpdatePipelineAppDto,
  ): Promise<PipelineAppResponse> {
    return this.plugins.update(organizationOf(caller), collection, id, caller.user, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Uninstall an app (a global one is refused: make it local first)' })
  @ApiNoContent()
  @Access(WRITE)
  async remove(
    @Caller() caller: AccessContext,
    @Collection() collection: PipelineCollection,
    @PluginIdParam('id') id: PluginId,
  ): Promise<void> {
    await this.plugins.remove(organizationOf(caller), collection, id, caller.user);
  }
}
