import { Injectable } from '@nestjs/common';
import type { User } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import type { ActivityItemResponse, ActivityPage } from './activity-log.presenter';
import type { ActivityPageQueryDto } from './activity-page-query.dto';
import { ActivityLogRepository, type ActivityFilter } from './activity-log.repository';

export type { ActivityPage } from './activity-log.presenter';
export type { ActivityFilter } from './activity-log.repository';

/** One field's change, as PostHog's activity log describes it. */
export interface ActivityChange {
  type: string;
  action: 'changed' | 'created' | 'deleted';
  field: string;
  before: unknown;
  after: unknown;
}

export interface ActivityEntry {
  organizationId: string;
  /** Null for an organization-wide item (an app, not one project's config of it). */
  teamId: number | null;
  user: User;
  scope: string;
  itemId: string;
  activity: string;
  /** Shown as the item's name (a flag's key). */
  name: string;
  changes: ActivityChange[] | null;
}

/** The changes between two snapshots of an item's presented fields, in field order. */
export function changesBetween(
  type: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: readonly string[],
): ActivityChange[] {
  const changes: ActivityChange[] = [];
  for (const field of fields) {
    const [old, now] = [before[field], after[field]];
    if (JSON.stringify(old) === JSON.stringify(now)) continue;
    const action =
      old === undefined || old === null
        ? 'created'
        : now === undefined || now === null
          ? 'deleted'
          : 'changed';
    changes.push({ type, action, field, before: old ?? null, after: now ?? null });
  }
  return changes;
}

/** One page of entries, before the links that need the request's URL (`toActivityPage`). */
export interface ActivityEntries {
  results: ActivityItemResponse[];
  page: number;
  limit: number;
  total: number;
}

/** PostHog's activity log: written with each change, read page by page (`?page=`, `?limit=`). */
@Injectable()
export class ActivityLogService {
  constructor(private readonly entries: ActivityLogRepository) {}

  /** Records an entry in the caller's unit of work, so that it commits with the change. */
  record(entry: ActivityEntry): Promise<void> {
    return this.entries.insert(entry);
  }

  /** A page of the entries `filter` selects (a project's flags, an organization's apps), newest first. */
  async page(query: ActivityPageQueryDto, filter: ActivityFilter): Promise<ActivityEntries> {
    const { page, limit } = query;
    const [entries, total] = await this.entries.findPage(filter, (page - 1) * limit, limit);
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
      page,
      limit,
      total,
    };
  }
}

/** The answer: the entries with absolute links to the pages around them. */
export function toActivityPage(url: URL, { results, page, limit, total }: ActivityEntries): ActivityPage {
  const link = (target: number) => {
    const next = new URL(url);
    next.searchParams.set('page', String(target));
    next.searchParams.set('limit', String(limit));
    return next.toString();
  };
  return {
    results,
    next: page * limit < total ? link(page + 1) : null,
    previous: page > 1 ? link(page - 1) : null,
    total_count: total,
  };
}
