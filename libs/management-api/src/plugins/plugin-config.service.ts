import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Organization, Plugin, PluginConfig, User } from '@hogbase/postgres';
import type { ActivityChange } from '../activity/activity-log.service';
import type { ResolvedProject } from '../auth/access.decorator';
import { ApiError, notFound, validationError } from '../common/api.error';
import { iso } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { assertPluginAccess } from './plugin-access.util';
import { PluginActivityService } from './plugin-activity.service';
import { PluginAttachmentRepository, type AttachmentSummary } from './plugin-attachment.repository';
import { configSchemaOf, pinsCode } from './plugin-code-pins.util';
import type { PluginLogsQueryDto } from './plugin-config-query.dto';
import { PluginLogEntryRepository } from './plugin-log-entry.repository';
import { PluginConfigRepository } from './plugin-config.repository';
import { PluginConfigSecrets } from './plugin-config-secrets.service';
import {
  attachmentActivities,
  attachmentKeysAfter,
  changedKeys,
  hasAttachmentChanges,
  maskConfig,
  noAttachmentChanges,
  secretKeys,
  SECRET_MASK,
  validateConfig,
  type AttachmentChanges,
} from './plugin-config-values.util';
import type { CreatePluginConfigDto, UpdatePluginConfigDto } from './plugin.dto';
import { parsePluginId, type PluginId } from './plugin-id.pipe';
import {
  type PipelineAppResponse,
  presentAttachment,
  presentLogEntry,
  presentPluginConfig,
  type PluginConfigResponse,
  type PluginLogEntryResponse,
} from './plugin.presenter';
import { PluginRepository } from './plugin.repository';
import { PluginService } from './plugin.service';

export interface LogPage {
  page: PageRequest;
  count: number;
  results: PluginLogEntryResponse[];
}

/** Stands for a kept secret while the config is validated: present, and never stored. */
const KEPT_SECRET = Symbol('kept secret');

@Injectable()
export class PluginConfigService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly configs: PluginConfigRepository,
    private readonly attachments: PluginAttachmentRepository,
    private readonly logEntries: PluginLogEntryRepository,
    private readonly pluginRows: PluginRepository,
    private readonly plugins: PluginService,
    private readonly secrets: PluginConfigSecrets,
    private readonly activity: PluginActivityService,
  ) {}

  async list(
    project: ResolvedProject,
    page: PageRequest,
  ): Promise<{ count: number; results: PluginConfigResponse[] }> {
    assertPluginAccess(project.organization, false);
    const [configs, count] = await this.configs.pageLiveInProject(project.team.id, page);
    return { count, results: await this.presentAll(configs, false) };
  }

  async retrieve(project: ResolvedProject, id: PluginId): Promise<PluginConfigResponse> {
    assertPluginAccess(project.organization, false);
    const config = await this.find(project, id);
    return (await this.presentAll([config], true))[0];
  }

  async create(
    project: ResolvedProject,
    user: User,
    dto: CreatePluginConfigDto,
    attachments: AttachmentChanges = noAttachmentChanges(),
  ): Promise<PluginConfigResponse> {
    const { organization, team } = project;
    assertPluginAccess(organization, false);
    return this.unitOfWork.run(async () => {
      // Only "not found" reads as DRF's bad pk: a failing database stays a 500, not a 400.
      // Locked: the code and schema pinned below are those the config was checked against.
      const plugin = await this.plugins
        .find(organization, null, parsePluginId(dto.plugin), true)
        .catch((error: unknown) => {
          if (!(error instanceof ApiError && error.code === 'not_found')) throw error;
          throw validationError(
            `Invalid pk "${dto.plugin}" - object does not exist.`,
            'plugin',
            'does_not_exist',
          );
        });
      // One live config per app and project (PostHog's unique plugin/team).
      await this.configs.lockSlot(plugin.id, team.id);
      if (await this.configs.existsLive(plugin.id, team.id))
        throw validationError('This app is already configured for this project.', 'plugin', 'unique');
      const values = await this.resolveConfig(plugin, plugin.configSchema, {}, dto.config ?? {}, attachments);
      attachmentKeysAfter(plugin.configSchema, new Set(), attachments);
      const now = new Date();
      const config = this.configs.build({
        pluginId: plugin.id,
        teamId: team.id,
        enabled: dto.enabled ?? false,
        order: dto.order ?? 0,
        config: values,
        error: null,
        webToken: randomBytes(24).toString('base64url'),
        deleted: false,
        createdAt: now,
        updatedAt: now,
      });
      await this.configs.save(config);
      if (pinsCode(organization, plugin)) await this.configs.pinCurrentCode(config, now);
      await this.activity.recordConfig(organization, user, plugin, config, 'config_created');
      const secrets = secretKeys(plugin.configSchema);
      for (const [activity, changes] of await this.applyAttachmentChanges(config, [], attachments, secrets)) {
        await this.activity.recordConfig(organization, user, plugin, config, activity, changes);
      }
      return (await this.presentAll([config], true))[0];
    });
  }

  async update(
    project: ResolvedProject,
    user: User,
    id: PluginId,
    dto: UpdatePluginConfigDto,
    attachments: AttachmentChanges = noAttachmentChanges(),
  ): Promise<PluginConfigResponse> {
    const { organization } = project;
    assertPluginAccess(organization, false);
    return this.unitOfWork.run(async () => {
      const config = await this.find(project, id, true);
      const plugin = await this.pluginRows.findById(config.pluginId);
      const schema = configSchemaOf(config, plugin);
      const activities: [string, ActivityChange[] | null][] = [];
      const stored = await this.attachments.summariesOf([config.id]);
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
      await this.configs.save(config);
      activities.push(
        ...(await this.applyAttachmentChanges(config, stored, attachments, secretKeys(schema))),
      );
      for (const [activity, changes] of activities) {
        await this.activity.recordConfig(organization, user, plugin, config, activity, changes);
      }
      return (await this.presentAll([config], true))[0];
    });
  }

  /** Soft delete, as PostHog: the row stays for its logs and stats. */
  async remove(project: ResolvedProject, user: User, id: PluginId): Promise<void> {
    assertPluginAccess(project.organization, false);
    await this.unitOfWork.run(async () => {
      const config = await this.find(project, id, true);
      const plugin = await this.pluginRows.findById(config.pluginId);
      config.deleted = true;
      config.enabled = false;
      config.updatedAt = new Date();
      await this.configs.save(config);
      await this.activity.recordConfig(project.organization, user, plugin, config, 'config_deleted');
    });
  }

  /** Moves a config pinned to a copy of another organization's app to the app's current code. */
  async upgrade(project: ResolvedProject, user: User, id: PluginId): Promise<PluginConfigResponse> {
    assertPluginAccess(project.organization, false);
    return this.unitOfWork.run(async () => {
      const config = await this.find(project, id, true);
      const before = config.codePinnedAt;
      if (before) {
        // The app's organization cannot write code between the copy and the answer.
        const plugin = await this.pluginRows.findByIdLockedForRead(config.pluginId);
        const at = new Date();
        await this.configs.pinCurrentCode(config, at);
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
      return (await this.presentAll([config], true))[0];
    });
  }

  /** Newest first; the query is read only once the config is found. */
  async logs(project: ResolvedProject, id: PluginId, query: PluginLogsQueryDto): Promise<LogPage> {
    assertPluginAccess(project.organization, false);
    const config = await this.find(project, id);
    const { page, filter } = query.read();
    const [entries, count] = await this.logEntries.pageOf(config, filter, page);
    return { page, count, results: entries.map(presentLogEntry) };
  }

  /** PostHog's exports_unsubscribe_configs: the export apps to migrate. */
  async exportsUnsubscribeConfigs(organization: Organization): Promise<PluginConfigResponse[]> {
    assertPluginAccess(organization, false);
    return this.presentAll(await this.configs.listExportsToUnsubscribe(organization.id), false);
  }

  private async find(project: ResolvedProject, id: PluginId, lock = false): Promise<PluginConfig> {
    if (id === null) throw notFound();
    const config = await this.configs.findLiveInProject(project.team.id, id, lock);
    if (!config) throw notFound();
    return config;
  }

  /** Secret values omitted, null or sent back masked keep their sealed value; new ones are sealed. */
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

  /** Answers the attachments' activities; the changes must already be checked against the schema. */
  private async applyAttachmentChanges(
    config: PluginConfig,
    existing: AttachmentSummary[],
    changes: AttachmentChanges,
    secrets: ReadonlySet<string>,
  ): Promise<[string, ActivityChange[]][]> {
    for (const [key, upload] of changes.add) await this.attachments.put(config, key, upload);
    const { removed, activities } = attachmentActivities(existing, changes, secrets);
    await this.attachments.deleteKeys(config.id, removed);
    return activities;
  }

  private async presentAll(
    configs: PluginConfig[],
    withPluginInfo: boolean,
  ): Promise<PluginConfigResponse[]> {
    if (configs.length === 0) return [];
    const pluginIds = [...new Set(configs.map((config) => config.pluginId))];
    const plugins = await this.pluginRows.findByIds(pluginIds);
    const byId = new Map(plugins.map((plugin) => [plugin.id, plugin]));
    const infos = withPluginInfo
      ? new Map((await this.plugins.presentAll(plugins)).map((info) => [info.id, info]))
      : new Map<number, PipelineAppResponse>();
    const ids = configs.map((config) => config.id);
    const rates = await this.configs.deliveryRates(ids);
    const withUpdates = await this.configs.idsWithCodeUpdates(configs);
    const attachments = new Map<number, AttachmentSummary[]>();
    for (const attachment of await this.attachments.summariesOf(ids)) {
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
}
