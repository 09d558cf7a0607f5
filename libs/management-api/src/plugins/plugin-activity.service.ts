import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource, In, type EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { ActivityLog, type User } from '@hogbase/postgres';
import { activityPageNumber, type ActivityChange, type ActivityPage } from '../activity/activity-log.service';
import { iso } from '../common/iso.util';
import { publicRequestUrl } from '../common/public-url.util';

export type PluginActivityScope = 'Plugin' | 'PluginConfig';

export interface PluginActivityEntry {
  organizationId: string;
  /** The project of a config's entry; null for the app's own (organization-wide) entries. */
  teamId: number | null;
  user: User;
  scope: PluginActivityScope;
  itemId: number;
  activity: string;
  /** The app's name, shown as the item's. */
  name: string;
  changes: ActivityChange[] | null;
}

const DEFAULT_PAGE_SIZE = 10;
const MAX_PAGE_SIZE = 1_000;

function positive(value: unknown, fallback: number): number {
  return typeof value === 'string' && /^\d+$/.test(value) && Number(value) > 0 ? Number(value) : fallback;
}

/**
 * The organization's activity of apps and their configs (PostHog's scopes `Plugin` and
 * `PluginConfig`), written in the transaction of each change and read as PostHog's page envelope.
 */
@Injectable()
export class PluginActivityService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async record(manager: EntityManager, entry: PluginActivityEntry): Promise<void> {
    const repository = manager.getRepository(ActivityLog);
    const itemId = String(entry.itemId);
    await repository.save(
      repository.create({
        id: uuidv7(),
        organizationId: entry.organizationId,
        teamId: entry.teamId,
        userId: entry.user.id,
        isSystem: false,
        scope: entry.scope,
        itemId,
        activity: entry.activity,
        detail: {
          id: itemId,
          changes: entry.changes,
          merge: null,
          trigger: null,
          name: entry.name,
          short_id: null,
          type: null,
        },
      }),
    );
  }

  async page(
    request: Request,
    query: Record<string, unknown>,
    organizationId: string,
  ): Promise<ActivityPage> {
    const limit = Math.min(positive(query.limit, DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
    const page = activityPageNumber(query.page);
    const [entries, total] = await this.dataSource.getRepository(ActivityLog).findAndCount({
      where: { organizationId, scope: In(['Plugin', 'PluginConfig']) },
      relations: { user: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: (page - 1) * limit,
      take: limit,
    });
    const url = (target: number) => {
      const link = publicRequestUrl(request);
      link.searchParams.set('page', String(target));
      link.searchParams.set('limit', String(limit));
      return link.toString();
    };
    return {
      results: entries.map((entry) => ({
        user: entry.user
          ? { first_name: entry.user.firstName, email: entry.user.email }
          : { first_name: 'System', email: null, is_system: true },
        activity: entry.activity,
        scope: entry.scope,
        item_id: entry.itemId,
        detail: entry.detail,
        created_at: iso(entry.createdAt),
      })),
      next: page * limit < total ? url(page + 1) : null,
      previous: page > 1 ? url(page - 1) : null,
      total_count: total,
    };
  }
}
