import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, type EntityManager } from 'typeorm';
import { Plugin, PluginConfig, Team, type Organization, type User } from '@hogbase/postgres';
import type { ActivityChange } from '../activity/activity-log.service';
import type { ResolvedProject } from '../auth/access-context';
import { ApiError, notFound, validationError } from '../common/api-error';
import { iso } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { assertPluginAccess, parsePluginId } from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { applyAttachmentChanges, attachmentsOf, type AttachmentSummary } from './plugin-attachment.store';
import { configSchemaOf, configsWithUpdates, pinCurrentCode, pinsCode } from './plugin-code-pins';
import { logPage, type LogPage } from './plugin-config-logs';
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
  presentPluginConfig,
  type PluginConfigResponse,
} from './plugin.presenter';
import { PluginService } from './plugin.service';

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
      // Locked: the code and schema pinned below are those the config was checked against.
      const plugin = await this.plugins
        .find(manager, organization, null, dto.plugin, true)
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
      const values = await this.resolveConfig(plugin, plugin.configSchema, {}, dto.config ?? {}, attachments);
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
      if (pinsCode(organization, plugin)) await pinCurrentCode(manager, config, now);
      await this.activity.recordConfig(organization, user, plugin, config, 'config_created');
      const secrets = secretKeys(plugin.configSchema);
      for (const [activity, changes] of await applyAttachmentChanges(
        manager,
        config,
        [],
        attachments,
        secrets,
      )) {
        await this.activity.recordConfig(organization, user, plugin, config, activity, changes);
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
      const schema = configSchemaOf(config, plugin);
      const activities: [string, ActivityChange[] | null][] = [];
      const stored = await attachmentsOf(manager, [config.id]);
      if (dto.config !== undefined) {
        const values = await this.resolveConfig(plugin, schema, config.config, dto.config, attachments);
        const changed = changedKeys(schema, config.config, values);
        config.config = values;
        if (changed.length) activities.push(['config_updated', changed]);
      }
      if (dto.config !== undefined || hasAttachmentChanges(attachments)) {
        this.refuseStatelessConfig(plugin, attachments);
        attachmentKeysAfter(schema, new Set(stored.map((attachment) => attachment.key)), attachments);
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
        ...(await applyAttachmentChanges(manager, config, stored, attachments, secretKeys(schema))),
      );
      for (const [activity, changes] of activities) {
        await this.activity.recordConfig(organization, user, plugin, config, activity, changes);
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
      await this.activity.recordConfig(project.organization, user, plugin, config, 'config_deleted');
    });
  }

  /**
   * Moves a config pinned to a copy of another organization's app (plugin-code-pins.ts) to the
   * app's current code and schema: its admin has looked at the new version. A config that follows
   * the app's latest code is answered as it is.
   */
  async upgrade(project: ResolvedProject, user: User, id: string): Promise<PluginConfigResponse> {
    assertPluginAccess(project.organization, false);
    return this.dataSource.transaction(async (manager) => {
      const config = await this.find(manager, project, id, true);
      const before = config.codePinnedAt;
      if (before) {
        // Shared lock: the app's organization cannot write code between the copy and the answer.
        const plugin = await manager
          .getRepository(Plugin)
          .findOneOrFail({ where: { id: config.pluginId }, lock: { mode: 'pessimistic_read' } });
        const at = new Date();
        await pinCurrentCode(manager, config, at);
        await this.activity.recordConfig(project.organization, user, plugin, config, 'config_updated', [
          {
            type: 'PluginConfig',
            action: 'changed',
            field: 'code_pinned_at',
            before: iso(before),
            after: iso(at),
          },
        ]);
      }
      return (await this.presentAll(manager, [config], true))[0];
    });
  }

  /** A page of a config's log lines, newest first (see logPage for the parameters). */
  async logs(project: ResolvedProject, id: string, query: Record<string, unknown>): Promise<LogPage> {
    assertPluginAccess(project.organization, false);
    const config = await this.find(this.dataSource.manager, project, id);
    return logPage(this.dataSource.manager, config, query);
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
    schema: unknown,
    stored: Record<string, unknown>,
    incoming: Record<string, unknown>,
    attachments: AttachmentChanges,
  ): Promise<Record<string, unknown>> {
    this.refuseStatelessConfig(plugin, attachments, incoming);
    const secrets = secretKeys(schema);
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
      schema,
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
    const withUpdates = await configsWithUpdates(manager, configs);
    const attachments = new Map<number, AttachmentSummary[]>();
    for (const attachment of await attachmentsOf(manager, ids)) {
      attachments.set(attachment.pluginConfigId, [
        ...(attachments.get(attachment.pluginConfigId) ?? []),
        attachment,
      ]);
    }
    return configs.map((config) => {
      const schema = configSchemaOf(config, byId.get(config.pluginId));
      const secrets = secretKeys(schema);
      // PostHog shows a stored file in place of its key's config value.
      const shownAttachments = (attachments.get(config.id) ?? []).map(
        (attachment) => [attachment.key, presentAttachment(attachment, secrets.has(attachment.key))] as const,
      );
      return presentPluginConfig(
        config,
        { ...maskConfig(schema, config.config), ...Object.fromEntries(shownAttachments) },
        rates.get(config.id) ?? null,
        withUpdates.has(config.id),
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
