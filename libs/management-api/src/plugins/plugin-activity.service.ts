import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { In, type EntityManager } from 'typeorm';
import type { Organization, Plugin, PluginConfig, User } from '@hogbase/postgres';
import { ActivityLogService, type ActivityChange, type ActivityPage } from '../activity/activity-log.service';

/**
 * The organization's activity of apps and their configs (PostHog's scopes `Plugin` and
 * `PluginConfig`), written in the transaction of each change, both named after the app.
 */
@Injectable()
export class PluginActivityService {
  constructor(private readonly log: ActivityLogService) {}

  /** An app's own entry: organization-wide, so no project. */
  async recordApp(
    manager: EntityManager,
    organization: Organization,
    user: User,
    plugin: Plugin,
    activity: string,
    changes: ActivityChange[] | null = null,
  ): Promise<void> {
    await this.log.record(manager, {
      organizationId: organization.id,
      teamId: null,
      user,
      scope: 'Plugin',
      itemId: String(plugin.id),
      activity,
      name: plugin.name,
      changes,
    });
  }

  /** A config's entry, in the config's project. */
  async recordConfig(
    manager: EntityManager,
    organization: Organization,
    user: User,
    plugin: Plugin,
    config: PluginConfig,
    activity: string,
    changes: ActivityChange[] | null = null,
  ): Promise<void> {
    await this.log.record(manager, {
      organizationId: organization.id,
      teamId: config.teamId,
      user,
      scope: 'PluginConfig',
      itemId: String(config.id),
      activity,
      name: plugin.name,
      changes,
    });
  }

  page(request: Request, query: Record<string, unknown>, organization: Organization): Promise<ActivityPage> {
    return this.log.page(request, query, {
      organizationId: organization.id,
      scope: In(['Plugin', 'PluginConfig']),
    });
  }
}
