import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, QueryFailedError, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import { Organization, Plugin, PluginSourceFile, type PluginType, type User } from '@hogbase/postgres';
import { changesBetween } from '../activity/activity-log.service';
import { notFound, validationError } from '../common/api-error';
import type { PageRequest } from '../common/pagination.util';
import { collectionCondition, type PipelineCollection } from './pipeline-collections';
import {
  assertManagesGlobalApps,
  assertOwnsPlugin,
  assertPluginAccess,
  parsePluginId,
} from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { PluginCatalogService } from './plugin-catalog.service';
import type { CreatePipelineAppDto, UpdatePipelineAppDto } from './plugin.dto';
import { downloadedAppFields, PluginInstaller, type SourceFileState } from './plugin-installer.service';
import { presentPlugin, type PipelineAppResponse } from './plugin.presenter';

/** The fields whose changes the activity log records. */
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

function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string }).code === '23505';
}

/**
 * Pipeline apps of an organization: what it sees (its own apps, global apps, and apps configured in
 * its projects), install, edit and uninstall. Source files, upgrades and update checks live in
 * PluginSourceService.
 */
@Injectable()
export class PluginService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly installer: PluginInstaller,
    private readonly catalog: PluginCatalogService,
    private readonly activity: PluginActivityService,
  ) {}

  /** The apps the organization sees, in one collection when given. */
  visible(
    manager: EntityManager,
    organization: Organization,
    collection: PipelineCollection | null,
  ): SelectQueryBuilder<Plugin> {
    const query = manager
      .getRepository(Plugin)
      .createQueryBuilder('plugin')
      .where(
        `(plugin.organization_id = :organizationId OR plugin.is_global OR EXISTS (
          SELECT 1 FROM plugin_configs config JOIN teams team ON team.id = config.team_id
          WHERE config.plugin_id = plugin.id AND NOT config.deleted AND team.organization_id = :organizationId))`,
        { organizationId: organization.id },
      );
    if (collection) query.andWhere(collectionCondition(collection, 'plugin'), { createdThrough: collection });
    return query;
  }

  /** An app the organization sees (in the collection), else 404: unknown and foreign ids look alike. */
  async find(
    manager: EntityManager,
    organization: Organization,
    collection: PipelineCollection | null,
    rawId: string | number,
    lock = false,
  ): Promise<Plugin> {
    const id = parsePluginId(rawId);
    if (id === null) throw notFound();
    const query = this.visible(manager, organization, collection).andWhere('plugin.id = :id', { id });
    if (lock) query.setLock('pessimistic_write');
    const plugin = await query.getOne();
    if (!plugin) throw notFound();
    return plugin;
  }

  async presentAll(plugins: Plugin[], manager = this.dataSource.manager): Promise<PipelineAppResponse[]> {
    const organizationIds = [...new Set(plugins.flatMap((plugin) => plugin.organizationId ?? []))];
    const organizations = organizationIds.length
      ? await manager.getRepository(Organization).find({
          select: { id: true, name: true },
          where: { id: In(organizationIds) },
        })
      : [];
    const names = new Map(organizations.map((organization) => [organization.id, organization.name]));
    const now = new Date();
    return plugins.map((plugin) =>
      presentPlugin(plugin, plugin.organizationId ? (names.get(plugin.organizationId) ?? null) : null, now),
    );
  }

  async present(plugin: Plugin, manager = this.dataSource.manager): Promise<PipelineAppResponse> {
    const [response] = await this.presentAll([plugin], manager);
    return response;
  }

  async list(
    organization: Organization,
    collection: PipelineCollection,
    page: PageRequest,
  ): Promise<{ count: number; results: PipelineAppResponse[] }> {
    assertPluginAccess(organization, false);
    const [plugins, count] = await this.visible(this.dataSource.manager, organization, collection)
      .orderBy('plugin.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
    return { count, results: await this.presentAll(plugins) };
  }

  async retrieve(
    organization: Organization,
    collection: PipelineCollection,
    id: string,
  ): Promise<PipelineAppResponse> {
    assertPluginAccess(organization, false);
    return this.present(await this.find(this.dataSource.manager, organization, collection, id));
  }

  /**
   * Installs an app. A source app takes the body's fields, its declared capabilities and metrics
   * included (shown until its code is inspected); any other is downloaded and inspected, and what
   * its files say wins over the body.
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
    const plugin = this.dataSource.getRepository(Plugin).create({
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
      return await this.dataSource.transaction(async (manager) => {
        await manager.getRepository(Plugin).save(plugin);
        await this.saveFiles(manager, plugin.id, files);
        await this.activity.recordApp(organization, user, plugin, 'installed');
        return this.present(plugin, manager);
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
    id: string,
    user: User,
    dto: UpdatePipelineAppDto,
  ): Promise<PipelineAppResponse> {
    assertPluginAccess(organization, true);
    return this.dataSource.transaction(async (manager) => {
      const plugin = await this.find(manager, organization, collection, id, true);
      assertOwnsPlugin(organization, plugin);
      if (dto.is_global !== undefined && dto.is_global !== plugin.isGlobal)
        assertManagesGlobalApps(organization);
      // A null plugin_type means what it means on create, "not given": the type stays.
      const type = dto.plugin_type ?? plugin.pluginType;
      if (type !== null && type !== plugin.pluginType) {
        await this.checkTypeAndUrl(type, plugin.urlWithSecrets ?? plugin.url);
      }
      const before = await this.present(plugin, manager);
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
      await manager.getRepository(Plugin).save(plugin);
      const after = await this.present(plugin, manager);
      await this.recordUpdate(manager, organization, user, plugin, before, after);
      return after;
    });
  }

  async remove(
    organization: Organization,
    collection: PipelineCollection,
    id: string,
    user: User,
  ): Promise<void> {
    assertPluginAccess(organization, true);
    await this.dataSource.transaction(async (manager) => {
      const plugin = await this.find(manager, organization, collection, id, true);
      assertOwnsPlugin(organization, plugin);
      if (plugin.isGlobal) {
        throw validationError('This plugin is marked as global! Make it local before uninstallation');
      }
      await manager.getRepository(Plugin).delete({ id: plugin.id });
      await this.activity.recordApp(organization, user, plugin, 'uninstalled');
    });
  }

  /**
   * Ids of the apps the organization sees that no project has enabled. PostHog answers for the
   * whole instance; here only for the apps the caller could see anyway.
   */
  async unused(organization: Organization): Promise<number[]> {
    assertPluginAccess(organization, false);
    const plugins = await this.visible(this.dataSource.manager, organization, null)
      .andWhere(
        'NOT EXISTS (SELECT 1 FROM plugin_configs used WHERE used.plugin_id = plugin.id AND used.enabled AND NOT used.deleted)',
      )
      .select('plugin.id')
      .orderBy('plugin.id', 'ASC')
      .getMany();
    return plugins.map((plugin) => plugin.id);
  }

  async recordUpdate(
    _manager: EntityManager,
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

  /** Replaces an app's stored files with these. */
  async saveFiles(manager: EntityManager, pluginId: number, files: SourceFileState[]): Promise<void> {
    const repository = manager.getRepository(PluginSourceFile);
    await repository.delete({ pluginId });
    if (files.length === 0) return;
    const now = new Date();
    await repository.insert(
      files.map((file) => ({
        pluginId,
        filename: file.filename,
        source: file.source,
        transpiled: file.transpiled,
        status: file.status,
        error: file.error,
        updatedAt: now,
      })),
    );
  }

  /**
   * Create's rules for a plugin_type and the address the app comes from, on create and on a PATCH
   * that changes the type: inline apps ship with the server, local apps come from a file: folder,
   * custom and repository apps from an archive, GitHub, GitLab or npm, repository apps from the catalog.
   */
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
    const exists = await this.dataSource
      .getRepository(Plugin)
      .exists({ where: { organizationId: organization.id, url } });
    if (exists) throw this.duplicate(url);
  }

  private duplicate(url: string) {
    return validationError(`Plugin from URL "${url}" already installed!`);
  }
}
