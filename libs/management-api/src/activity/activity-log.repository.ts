import { Injectable } from '@nestjs/common';
import { In, type FindOptionsWhere } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { ActivityLog } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { ActivityEntry } from './activity-log.service';

/**
 * Which entries a page lists. It always binds the organization or the project the key reaches, so
 * that no page reads another one's changes.
 */
export type ActivityFilter = ({ organizationId: string } | { teamId: number }) & {
  organizationId?: string;
  teamId?: number;
  /** One scope (FeatureFlag) or several (an app's Plugin and PluginConfig entries). */
  scope: string | readonly string[];
  itemId?: string;
};

@Injectable()
export class ActivityLogRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  async insert(entry: ActivityEntry): Promise<void> {
    const repository = this.unitOfWork.repository(ActivityLog);
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

  /** Newest first, with the user who made each change. */
  findPage(filter: ActivityFilter, skip: number, take: number): Promise<[ActivityLog[], number]> {
    const { organizationId, teamId, scope, itemId } = filter;
    // The connection refuses an undefined where value rather than ignore it: set only what is bound.
    const where: FindOptionsWhere<ActivityLog> = {
      scope: typeof scope === 'string' ? scope : In([...scope]),
    };
    if (organizationId !== undefined) where.organizationId = organizationId;
    if (teamId !== undefined) where.teamId = teamId;
    if (itemId !== undefined) where.itemId = itemId;
    return this.unitOfWork.repository(ActivityLog).findAndCount({
      where,
      relations: { user: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip,
      take,
    });
  }
}
