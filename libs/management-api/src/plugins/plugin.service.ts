import { Injectable } from '@nestjs/common';
import type { Organization, Plugin, PluginType, User } from '@hogbase/postgres';
import { changesBetween } from '../activity/activity-log.service';
import { notFound, validationError } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { OrganizationRepository } from '../organizations/organization.repository';
import { isUniqueViolation } from '../persistence/unique-violation.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { PipelineCollection } from './pipeline-collections.util';
import { assertManagesGlobalApps, assertOwnsPlugin, assertPluginAccess } from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { PluginCatalogService } from './plugin-catalog.service';
import type { CreatePipelineAppDto, UpdatePipelineAppDto } from './plugin.dto';
import type { PluginId } from './plugin-id.pipe';
import { downloadedAppFields, PluginInstaller, type SourceFileState } from './plugin-installer.service';
import { presentPlugin, type PipelineAppResponse } from './plugin.presenter';
import { PluginRepository } from './plugin.repository';
import { PluginSourceFileRepository } from './plugin-source-file.repository';

const TRACKED_FIELDS = [
  'plugin_type',
  'name',
  'description',
  'icon',
  'config_schema',
  'tag',
  'is_global',
  'capabilities',
  'metrics',
  'public_jobs',
] as const;

/** The address without its query string: a `?private_token=` never leaves the server. */
export function urlWithoutQuery(url: string): string {
  const hash = url.indexOf('#');
  const withoutHash = hash === -1 ? url : url.slice(0, hash);
  const query = withoutHash.indexOf('?');
  return query === -1 ? withoutHash : withoutHash.slice(0, query);
}

/** An organization sees its own apps, global apps, and apps configured in its projects. */
@Injectable()
export class PluginService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly plugins: PluginRepository,
    private readonly organizations: OrganizationRepository,
    private readonly sourceFiles: PluginSourceFileRepository,
    private readonly installer: PluginInstaller,
    private readonly catalog: PluginCatalogService,
    private readonly activity: PluginActivityService,
  ) {}

  /** Unknown, malformed and foreign ids are the same 404. */
  async find(
    organization: Organization,
    collection: PipelineCollection | null,
    id: PluginId,
    lock = false,
  ): Promise<Plugin> {
    if (id === null) throw notFound();
    const plugin = await this.plugins.findVisible(organization.id, collection, id, lock);
    if (!plugin) throw notFound();
    return plugin;
  }

  async presentAll(plugins: Plugin[]): Promise<PipelineAppResponse[]> {
    const names = await this.organizations.namesByIds([
      ...new Set(plugins.flatMap((plugin) => plugin.organizationId ?? [])),
    ]);
    const now = new Date();
    return plugins.map((plugin) =>
      presentPlugin(plugin, plugin.organizationId ? (names.get(plugin.organizationId) ?? null) : null, now),
    );
  }

  async present(plugin: Plugin): Promise<PipelineAppResponse> {
    const [response] = await this.presentAll([plugin]);
    return response;
  }

  async list(
    organization: Organization,
    collection: PipelineCollection,
    page: PageRequest,
  ): Promise<{ count: number; results: PipelineAppResponse[] }> {
    assertPluginAccess(organization, false);
    const [plugins, count] = await this.plugins.pageVisible(organization.id, collection, page);
    return { count, results: await this.presentAll(plugins) };
  }

  async retrieve(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
  ): Promise<PipelineAppResponse> {
    assertPluginAccess(organization, false);
    return this.present(await this.find(organization, collection, id));
  }

  /**
   * A source app takes the body's fields (declared capabilities shown until inspected); any other
   * is downloaded and inspected, and what its files say wins over the body.
   */
  async create(
    organization: Organization,
    collection: PipelineCollection,
    user: User,
    dto: CreatePipelineAppDto,
  ): Promise<PipelineAppResponse> {
    assertPluginAccess(organization, true);
    if (dto.is_global) assertManagesGlobalApps(organization);
    const type: PluginType | null =
      dto.plugin_type ?? (dto.url === undefined ? null : dto.url.startsWith('file:') ? 'local' : 'custom');
    const plugin = this.plugins.build({
      organizationId: organization.id,
      pluginType: type,
      isGlobal: dto.is_global ?? false,
      description: '',
      configSchema: [],
      capabilities: {},
      metrics: {},
      publicJobs: {},
      declaredCapabilities: null,
      declaredMetrics: null,
      createdThrough: collection,
    });
    let files: SourceFileState[] = [];
    if (type === null) throw validationError('This field is required.', 'url', 'required');
    await this.checkTypeAndUrl(type, dto.url ?? null);
    if (type === 'source') {
      if (dto.name === undefined) throw validationError('This field is required.', 'name', 'required');
      plugin.name = dto.name;
      plugin.description = dto.description ?? '';
      plugin.icon = dto.icon ?? null;
      plugin.configSchema = dto.config_schema ?? [];
      plugin.tag = dto.tag ?? null;
      plugin.publicJobs = dto.public_jobs ?? {};
      plugin.declaredCapabilities = dto.capabilities ?? null;
      plugin.declaredMetrics = dto.metrics ?? null;
    } else if (dto.url !== undefined) {
      // local, custom or repository: checkTypeAndUrl refused inline apps and a missing url.
      await this.refuseDuplicate(organization, urlWithoutQuery(dto.url));
      const app = await this.installer.download(dto.url);
      Object.assign(plugin, downloadedAppFields(app), {
        url: app.urlWithoutSecrets,
        urlWithSecrets: dto.url,
      });
      files = app.files;
    }
    try {
      return await this.unitOfWork.run(async () => {
        await this.plugins.save(plugin);
        await this.sourceFiles.replace(plugin.id, files);
        await this.activity.recordApp(organization, user, plugin, 'installed');
        return this.present(plugin);
      });
    } catch (error) {
      // Two installs of one URL at once: the unique index settles it.
      if (isUniqueViolation(error)) throw this.duplicate(plugin.url ?? '');
      throw error;
    }
  }

  async update(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
    user: User,
    dto: UpdatePipelineAppDto,
  ): Promise<PipelineAppResponse> {
    assertPluginAccess(organization, true);
    return this.unitOfWork.run(async () => {
      const plugin = await this.find(organization, collection, id, true);
      assertOwnsPlugin(organization, plugin);
      if (dto.is_global !== undefined && dto.is_global !== plugin.isGlobal)
        assertManagesGlobalApps(organization);
      // A null plugin_type means what it means on create, "not given": the type stays.
      const type = dto.plugin_type ?? plugin.pluginType;
      if (type !== null && type !== plugin.pluginType) {
        await this.checkTypeAndUrl(type, plugin.urlWithSecrets ?? plugin.url);
      }
      const before = await this.present(plugin);
      plugin.pluginType = type;
      if (dto.name !== undefined) plugin.name = dto.name;
      if (dto.description !== undefined) plugin.description = dto.description ?? '';
      if (dto.icon !== undefined) plugin.icon = dto.icon;
      if (dto.config_schema !== undefined) plugin.configSchema = dto.config_schema;
      if (dto.tag !== undefined) plugin.tag = dto.tag;
      if (dto.is_global !== undefined) plugin.isGlobal = dto.is_global;
      // SECURITY: declared, never the inspected `capabilities` and `metrics` the apps runtime reads.
      if (dto.capabilities !== undefined) plugin.declaredCapabilities = dto.capabilities;
      if (dto.metrics !== undefined) plugin.declaredMetrics = dto.metrics;
      if (dto.public_jobs !== undefined) plugin.publicJobs = dto.public_jobs;
      plugin.updatedAt = new Date();
      await this.plugins.save(plugin);
      const after = await this.present(plugin);
      await this.recordUpdate(organization, user, plugin, before, after);
      return after;
    });
  }

  async remove(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
    user: User,
  ): Promise<void> {
    assertPluginAccess(organization, true);
    await this.unitOfWork.run(async () => {
      const plugin = await this.find(organization, collection, id, true);
      assertOwnsPlugin(organization, plugin);
      if (plugin.isGlobal) {
        throw validationError('This plugin is marked as global! Make it local before uninstallation');
      }
      await this.plugins.delete(plugin.id);
      await this.activity.recordApp(organization, user, plugin, 'uninstalled');
    });
  }

  /** PostHog answers for the whole instance; here only for the apps the caller could see anyway. */
  async unused(organization: Organization): Promise<number[]> {
    assertPluginAccess(organization, false);
    return this.plugins.unusedIds(organization.id);
  }

  /** Must run in the caller's unit of work. */
  async recordUpdate(
    organization: Organization,
    user: User,
    plugin: Plugin,
    before: PipelineAppResponse,
    after: PipelineAppResponse,
  ): Promise<void> {
    const changes = changesBetween(
      'Plugin',
      before as unknown as Record<string, unknown>,
      after as unknown as Record<string, unknown>,
      TRACKED_FIELDS,
    );
    if (changes.length > 0) await this.activity.recordApp(organization, user, plugin, 'updated', changes);
  }

  /** Create's rules for a plugin_type and its url, also on a PATCH that changes the type. */
  private async checkTypeAndUrl(type: PluginType, url: string | null): Promise<void> {
    switch (type) {
      case 'inline':
        throw validationError(
          'Inline apps ship with the server and cannot be installed through the API.',
          'plugin_type',
        );
      case 'source':
        return;
      case 'local':
      case 'custom':
      case 'repository':
        if (url === null) throw validationError('This field is required.', 'url', 'required');
        if ((type === 'local') !== url.startsWith('file:')) {
          throw validationError(
            type === 'local'
              ? 'Local apps are installed from a file: URL.'
              : 'Must be a GitHub/GitLab repository or a npm package URL!',
            'url',
          );
        }
        if (type === 'repository' && !(await this.catalog.lists(urlWithoutQuery(url)))) {
          throw validationError('This app is not in the apps repository.', 'url');
        }
    }
  }

  private async refuseDuplicate(organization: Organization, url: string): Promise<void> {
    if (await this.plugins.existsWithUrl(organization.id, url)) throw this.duplicate(url);
  }

  private duplicate(url: string) {
    return validationError(`Plugin from URL "${url}" already installed!`);
  }
}
