import { Injectable } from '@nestjs/common';
import type { Organization, Plugin, PluginConfig, User } from '@hogbase/postgres';
import {
  ActivityLogService,
  type ActivityChange,
  type ActivityEntries,
} from '../activity/activity-log.service';
import type { ActivityPageQueryDto } from '../activity/activity-page-query.dto';

/**
 * The organization's activity of apps and their configs (PostHog's scopes `Plugin` and
 * `PluginConfig`), written in the transaction of each change, both named after the app.
 */
@Injectable()
export class PluginActivityService {
  constructor(private readonly log: ActivityLogService) {}

  /** An app's own entry: organization-wide, so no project. */
  async recordApp(
    organization: Organization,
    user: User,
    plugin: Plugin,
    activity: string,
    changes: ActivityChange[] | null = null,
  ): Promise<void> {
    await this.log.record({
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
    organization: Organization,
    user: User,
    plugin: Plugin,
    config: PluginConfig,
    activity: string,
    changes: ActivityChange[] | null = null,
  ): Promise<void> {
    await this.log.record({
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

  page(query: ActivityPageQueryDto, organization: Organization): Promise<ActivityEntries> {
    return this.log.page(query, {
      organizationId: organization.id,
      scope: ['Plugin', 'PluginConfig'],
    });
  }
}
