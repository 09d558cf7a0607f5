import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, type EntityManager } from 'typeorm';
import { Plugin, PluginConfig, PluginLogEntry, Team, type Organization, type User } from '@hogbase/postgres';
import type { ActivityChange } from '../activity/activity-log.service';
import type { ResolvedProject } from '../auth/access-context';
import { ApiError, notFound, validationError } from '../common/api-error';
import type { PageRequest } from '../common/pagination.util';
import { assertPluginAccess, parsePluginId } from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { applyAttachmentChanges, attachmentsOf, type AttachmentSummary } from './plugin-attachment.store';
import { PluginConfigSecrets } from './plugin-config-secrets.service';
import {
  attachmentKeysAfter,
  changedKeys,
  hasAttachmentChanges,
  maskConfig,
  noAttachmentChanges,
  secretKeys,
  SECRET_MASK,
  validateConfig,
  type AttachmentChanges,
} from './plugin-config-values';
import type { CreatePluginConfigDto, UpdatePluginConfigDto } from './plugin.dto';
import {
  type PipelineAppResponse,
  presentAttachment,
  presentLogEntry,
  presentPluginConfig,
  type PluginConfigResponse,
  type PluginLogEntryResponse,
} from './plugin.presenter';
import { PluginService } from './plugin.service';

const LOG_TYPES = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'];
const DEFAULT_LOG_LIMIT = 50;
const MAX_LOG_LIMIT = 500;

/** Stands for a kept secret while the config is validated: present, and never stored. */
const KEPT_SECRET = Symbol('kept secret');

/** Per-project configs of apps (`plugin_configs`): secret values sealed, shown masked. */
@Injectable()
export class PluginConfigService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly plugins: PluginService,
    private readonly secrets: PluginConfigSecrets,
    private readonly activity: PluginActivityService,
  ) {}

  async list(
    project: ResolvedProject,
    page: PageRequest,
  ): Promise<{ count: number; results: PluginConfigResponse[] }> {
    assertPluginAccess(project.organization, false);
    const [configs, count] = await this.dataSource.getRepository(PluginConfig).findAndCount({
      where: { teamId: project.team.id, deleted: false },
      order: { order: 'ASC', pluginId: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { count, results: await this.presentAll(this.dataSource.manager, configs, false) };
  }

  async retrieve(project: ResolvedProject, id: string): Promise<PluginConfigResponse> {
    assertPluginAccess(project.organization, false);
    const config = await this.find(this.dataSource.manager, project, id);
    return (await this.presentAll(this.dataSource.manager, [config], true))[0];
  }

  async create(
    project: ResolvedProject,
    user: User,
    dto: CreatePluginConfigDto,
    attachments: AttachmentChanges = noAttachmentChanges(),
  ): Promise<PluginConfigResponse> {
    const { organization, team } = project;
    assertPluginAccess(organization, false);
    return this.dataSource.transaction(async (manager) => {
      // Only "not found" reads as DRF's bad pk: a failing database stays a 500, not a 400.
      const plugin = await this.plugins
        .find(manager, organization, null, dto.plugin)
        .catch((error: unknown) => {
          if (!(error instanceof ApiError && error.code === 'not_found')) throw error;
          throw validationError(
            `Invalid pk "${dto.plugin}" - object does not exist.`,
            'plugin',
            'does_not_exist',
          );
        });
      // One config per app and project (PostHog's unique plugin/team), counted among those not deleted.
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [plugin.id, team.id]);
      const existing = await manager
        .getRepository(PluginConfig)
        .exists({ where: { pluginId: plugin.id, teamId: team.id, deleted: false } });
      if (existing)
        throw validationError('This app is already configured for this project.', 'plugin', 'unique');
      const values = await this.resolveConfig(plugin, {}, dto.config ?? {}, attachments);
      attachmentKeysAfter(plugin.configSchema, new Set(), attachments);
      const now = new Date();
      const config = manager.getRepository(PluginConfig).create({
        pluginId: plugin.id,
        teamId: team.id,
        enabled: dto.enabled ?? false,
        order: dto.order ?? 0,
        config: values,
        error: null,
        // The unguessable part of a site app's address.
        webToken: randomBytes(24).toString('base64url'),
        deleted: false,
        createdAt: now,
        updatedAt: now,
      });
      await manager.getRepository(PluginConfig).save(config);
      await this.activity.recordConfig(manager, organization, user, plugin, config, 'config_created');
      const secrets = secretKeys(plugin.configSchema);
      for (const [activity, changes] of await applyAttachmentChanges(
        manager,
        config,
        [],
        attachments,
        secrets,
      )) {
        await this.activity.recordConfig(manager, organization, user, plugin, config, activity, changes);
      }
      return (await this.presentAll(manager, [config], true))[0];
    });
  }

  async update(
    project: ResolvedProject,
    user: User,
    id: string,
    dto: UpdatePluginConfigDto,
    attachments: AttachmentChanges = noAttachmentChanges(),
  ): Promise<PluginConfigResponse> {
    const { organization } = project;
    assertPluginAccess(organization, false);
    return this.dataSource.transaction(async (manager) => {
      const config = await this.find(manager, project, id, true);
      const plugin = await manager.getRepository(Plugin).findOneByOrFail({ id: config.pluginId });
      const activities: [string, ActivityChange[] | null][] = [];
      const stored = await attachmentsOf(manager, [config.id]);
      if (dto.config !== undefined) {
        const values = await this.resolveConfig(plugin, config.config, dto.config, attachments);
        const changed = changedKeys(plugin.configSchema, config.config, values);
        config.config = values;
        if (changed.length) activities.push(['config_updated', changed]);
      }
      if (dto.config !== undefined || hasAttachmentChanges(attachments)) {
        this.refuseStatelessConfig(plugin, attachments);
        attachmentKeysAfter(
          plugin.configSchema,
          new Set(stored.map((attachment) => attachment.key)),
          attachments,
        );
      }
      if (dto.order !== undefined) config.order = dto.order;
      if (dto.enabled !== undefined && dto.enabled !== config.enabled) {
        config.enabled = dto.enabled;
        activities.push([dto.enabled ? 'enabled' : 'disabled', null]);
      }
      if (dto.deleted === true) {
        config.deleted = true;
        config.enabled = false;
        activities.push(['config_deleted', null]);
      }
      // A new updated_at is also how the apps runtime learns that the attachments changed.
      config.updatedAt = new Date();
      await manager.getRepository(PluginConfig).save(config);
      activities.push(
        ...(await applyAttachmentChanges(
          manager,
          config,
          stored,
          attachments,
          secretKeys(plugin.configSchema),
        )),
      );
      for (const [activity, changes] of activities) {
        await this.activity.recordConfig(manager, organization, user, plugin, config, activity, changes);
      }
      return (await this.presentAll(manager, [config], true))[0];
    });
  }

  /** PostHog's destroy soft-deletes: the row stays (deleted, disabled) for its logs and stats. */
  async remove(project: ResolvedProject, user: User, id: string): Promise<void> {
    assertPluginAccess(project.organization, false);
    await this.dataSource.transaction(async (manager) => {
      const config = await this.find(manager, project, id, true);
      const plugin = await manager.getRepository(Plugin).findOneByOrFail({ id: config.pluginId });
      config.deleted = true;
      config.enabled = false;
      config.updatedAt = new Date();
      await manager.getRepository(PluginConfig).save(config);
      await this.activity.recordConfig(manager, project.organization, user, plugin, config, 'config_deleted');
    });
  }

  /** Log lines of a config, newest first: `limit`, `type_filter` (comma list), `search`, `after`, `before`. */
  async logs(
    project: ResolvedProject,
    id: string,
    query: Record<string, unknown>,
  ): Promise<{ count: number; next: null; previous: null; results: PluginLogEntryResponse[] }> {
    assertPluginAccess(project.organization, false);
    const config = await this.find(this.dataSource.manager, project, id);
    const builder = this.dataSource
      .getRepository(PluginLogEntry)
      .createQueryBuilder('entry')
      .where('entry.plugin_config_id = :configId', { configId: config.id })
      .andWhere('entry.team_id = :teamId', { teamId: project.team.id });
    const types =
      typeof query.type_filter === 'string' && query.type_filter !== ''
        ? query.type_filter.split(',').map((type) => type.trim().toUpperCase())
        : [];
    const unknownType = types.find((type) => !LOG_TYPES.includes(type));
    if (unknownType)
      throw validationError(`"${unknownType}" is not a valid choice.`, 'type_filter', 'invalid_choice');
    if (types.length) builder.andWhere('entry.type IN (:...types)', { types });
    if (typeof query.search === 'string' && query.search !== '') {
      builder.andWhere("entry.message ILIKE :search ESCAPE '\\'", {
        search: `%${query.search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`,
      });
    }
    for (const [name, operator] of [
      ['after', '>'],
      ['before', '<'],
    ] as const) {
      const value = query[name];
      if (value === undefined || value === '') continue;
      const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
      if (Number.isNaN(date.getTime())) throw validationError('Datetime has wrong format.', name, 'invalid');
      builder.andWhere(`entry.timestamp ${operator} :${name}`, { [name]: date });
    }
    const limitText = typeof query.limit === 'string' ? query.limit : '';
    const limit =
      /^\d+$/.test(limitText) && Number(limitText) > 0
        ? Math.min(Number(limitText), MAX_LOG_LIMIT)
        : DEFAULT_LOG_LIMIT;
    const [entries, count] = await builder
      .orderBy('entry.timestamp', 'DESC')
      .addOrderBy('entry.id', 'DESC')
      .take(limit)
      .getManyAndCount();
    return { count, next: null, previous: null, results: entries.map(presentLogEntry) };
  }

  /**
   * PostHog's exports_unsubscribe_configs: enabled configs of the organization's projects except
   * global transformations and site apps, and local site apps; the export apps to migrate.
   */
  async exportsUnsubscribeConfigs(organization: Organization): Promise<PluginConfigResponse[]> {
    assertPluginAccess(organization, false);
    const configs = await this.dataSource
      .getRepository(PluginConfig)
      .createQueryBuilder('config')
      .innerJoin(Team, 'team', 'team.id = config.team_id')
      .innerJoin(Plugin, 'plugin', 'plugin.id = config.plugin_id')
      .where('team.organization_id = :organizationId', { organizationId: organization.id })
      .andWhere('config.enabled AND NOT config.deleted')
      .andWhere(
        `NOT (plugin.is_global AND (plugin.capabilities -> 'methods' @> '["processEvent"]'::jsonb OR plugin.capabilities = '{}'::jsonb))`,
      )
      .andWhere(`NOT (plugin.plugin_type = 'local' AND plugin.capabilities = '{}'::jsonb)`)
      .orderBy('config.id', 'ASC')
      .getMany();
    return this.presentAll(this.dataSource.manager, configs, false);
  }

  private async find(
    manager: EntityManager,
    project: ResolvedProject,
    rawId: string,
    lock = false,
  ): Promise<PluginConfig> {
    const id = parsePluginId(rawId);
    if (id === null) throw notFound();
    const config = await manager.getRepository(PluginConfig).findOne({
      where: { id, teamId: project.team.id, deleted: false },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!config) throw notFound();
    return config;
  }

  /**
   * The config to store: secret values omitted, null or sent back masked keep their stored
   * (sealed) value, new ones are sealed; the whole is checked against the app's schema first.
   */
  private async resolveConfig(
    plugin: Plugin,
    stored: Record<string, unknown>,
    incoming: Record<string, unknown>,
    attachments: AttachmentChanges,
  ): Promise<Record<string, unknown>> {
    this.refuseStatelessConfig(plugin, attachments, incoming);
    const secrets = secretKeys(plugin.configSchema);
    const merged: Record<string, unknown> = { ...incoming };
    for (const key of secrets) {
      const value = incoming[key];
      if ((value === undefined || value === null || value === SECRET_MASK) && stored[key] !== undefined) {
        merged[key] = KEPT_SECRET;
      } else if (value === SECRET_MASK) {
        delete merged[key];
      }
    }
    const checked = validateConfig(
      plugin.configSchema,
      Object.fromEntries(
        Object.entries(merged).map(([key, value]) => [key, value === KEPT_SECRET ? 'kept' : value]),
      ),
    );
    const result: Record<string, unknown> = {};
    for (const key of Object.keys(checked)) {
      if (merged[key] === KEPT_SECRET) result[key] = stored[key];
      else if (secrets.has(key)) result[key] = await this.secrets.seal(checked[key]);
      else result[key] = checked[key];
    }
    return result;
  }

  private refuseStatelessConfig(
    plugin: Plugin,
    attachments: AttachmentChanges,
    incoming: Record<string, unknown> = {},
  ): void {
    if (plugin.isStateless && (Object.keys(incoming).length > 0 || hasAttachmentChanges(attachments))) {
      throw validationError('Stateless plugins cannot have a config!', 'config');
    }
  }

  private async presentAll(
    manager: EntityManager,
    configs: PluginConfig[],
    withPluginInfo: boolean,
  ): Promise<PluginConfigResponse[]> {
    if (configs.length === 0) return [];
    const pluginIds = [...new Set(configs.map((config) => config.pluginId))];
    const plugins = await manager.getRepository(Plugin).findBy({ id: In(pluginIds) });
    const byId = new Map(plugins.map((plugin) => [plugin.id, plugin]));
    const infos = withPluginInfo
      ? new Map((await this.plugins.presentAll(plugins, manager)).map((info) => [info.id, info]))
      : new Map<number, PipelineAppResponse>();
    const ids = configs.map((config) => config.id);
    const rates = await this.deliveryRates(manager, ids);
    const attachments = new Map<number, AttachmentSummary[]>();
    for (const attachment of await attachmentsOf(manager, ids)) {
      attachments.set(attachment.pluginConfigId, [
        ...(attachments.get(attachment.pluginConfigId) ?? []),
        attachment,
      ]);
    }
    return configs.map((config) => {
      const schema = byId.get(config.pluginId)?.configSchema;
      const secrets = secretKeys(schema);
      // PostHog shows a stored file in place of its key's config value.
      const shownAttachments = (attachments.get(config.id) ?? []).map(
        (attachment) => [attachment.key, presentAttachment(attachment, secrets.has(attachment.key))] as const,
      );
      return presentPluginConfig(
        config,
        { ...maskConfig(schema, config.config), ...Object.fromEntries(shownAttachments) },
        rates.get(config.id) ?? null,
        infos.get(config.pluginId),
      );
    });
  }

  /** succeeded / (succeeded + failed) over the last 24 hours, per config; none when nothing was delivered. */
  private async deliveryRates(manager: EntityManager, ids: number[]): Promise<Map<number, number>> {
    const rows: { plugin_config_id: number; succeeded: string; failed: string }[] = await manager.query(
      `SELECT plugin_config_id, sum(succeeded) AS succeeded, sum(failed) AS failed FROM plugin_delivery_stats
       WHERE plugin_config_id = ANY($1) AND hour >= now() - interval '24 hours' GROUP BY plugin_config_id`,
      [ids],
    );
    const rates = new Map<number, number>();
    for (const row of rows) {
      const total = Number(row.succeeded) + Number(row.failed);
      if (total > 0) rates.set(row.plugin_config_id, Number(row.succeeded) / total);
    }
    return rates;
  }
}
