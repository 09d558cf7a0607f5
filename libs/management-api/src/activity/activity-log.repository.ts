import { Injectable } from '@nestjs/common';
import type { FindOptionsWhere } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { ActivityLog } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { ActivityEntry } from './activity-log.service';

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
  findPage(
    where: FindOptionsWhere<ActivityLog>,
    skip: number,
    take: number,
  ): Promise<[ActivityLog[], number]> {
    return this.unitOfWork.repository(ActivityLog).findAndCount({
      where,
      relations: { user: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip,
      take,
    });
  }
}
