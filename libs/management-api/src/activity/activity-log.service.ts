import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource, EntityManager, type FindOptionsWhere } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { ActivityLog, type User } from '@hogbase/postgres';
import { ApiError } from '../common/api-error';
import { iso } from '../common/iso.util';
import { publicRequestUrl } from '../common/public-url.util';
import {
  ACTIVITY_PAGE_SIZE,
  type ActivityPage,
  MAX_ACTIVITY_PAGE,
  MAX_ACTIVITY_PAGE_SIZE,
} from './activity-log.presenter';

export type { ActivityPage } from './activity-log.presenter';

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

function positive(value: unknown, fallback: number): number {
  return typeof value === 'string' && /^\d+$/.test(value) && Number(value) > 0 ? Number(value) : fallback;
}

/** `?page=`: 1 when absent; otherwise an integer from 1 to MAX_ACTIVITY_PAGE, or DRF's 400 on `page`. */
export function activityPageNumber(value: unknown): number {
  if (value === undefined || value === '') return 1;
  if (typeof value !== 'string' || !/^\s*[+-]?\d+\s*$/.test(value)) {
    throw new ApiError('invalid', 'A valid integer is required.', 'page');
  }
  const page = Number(value);
  if (page < 1) throw new ApiError('invalid', 'Ensure this value is greater than or equal to 1.', 'page');
  if (page > MAX_ACTIVITY_PAGE) {
    throw new ApiError('invalid', `Ensure this value is less than or equal to ${MAX_ACTIVITY_PAGE}.`, 'page');
  }
  return page;
}

/** PostHog's activity log: written with each change, read page by page (`?page=`, `?limit=`). */
@Injectable()
export class ActivityLogService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Records an entry through the transaction's manager, so that it commits with the change (and
   * never asks the pool for a second connection while that transaction is open).
   */
  async record(manager: EntityManager, entry: ActivityEntry): Promise<void> {
    const repository = manager.getRepository(ActivityLog);
    await repository.save(
      repository.create({
        id: uuidv7(),
        organizationId: entry.organizationId,
        teamId: entry.teamId,
        userId: entry.user.id,
        isSystem: false,
        scope: entry.scope,
        itemId: entry.itemId,
        activity: entry.activity,
        detail: {
          id: entry.itemId,
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

  /**
   * A page of the entries `where` selects, newest first. `where` is the caller's scope (a project's
   * flags, an organization's apps): it must always bind the organization or project the key reaches.
   */
  async page(
    request: Request,
    query: Record<string, unknown>,
    where: FindOptionsWhere<ActivityLog>,
  ): Promise<ActivityPage> {
    // A limit that is not a positive integer is the default, as DRF reads one; a larger one is capped.
    const limit = Math.min(positive(query.limit, ACTIVITY_PAGE_SIZE), MAX_ACTIVITY_PAGE_SIZE);
    const page = activityPageNumber(query.page);
    const [entries, total] = await this.dataSource.getRepository(ActivityLog).findAndCount({
      where,
      relations: { user: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: (page - 1) * limit,
      take: limit,
    });
    const url = (target: number) => {
      const next = publicRequestUrl(request);
      next.searchParams.set('page', String(target));
      next.searchParams.set('limit', String(limit));
      return next.toString();
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
