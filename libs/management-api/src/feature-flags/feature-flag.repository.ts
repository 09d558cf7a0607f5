import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { FeatureFlag } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export interface FlagListFilters {
  active?: boolean;
  search?: string;
  type?: 'boolean' | 'multivariant';
}

/** A flag's variants, or none: what tells a multivariate flag from a boolean one. */
const VARIANT_COUNT = "jsonb_array_length(COALESCE(flag.filters->'multivariate'->'variants', '[]'::jsonb))";

@Injectable()
export class FeatureFlagRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** A page of the project's live flags, newest first, with their creators. */
  listLive(teamId: number, filters: FlagListFilters, page: PageRequest): Promise<[FeatureFlag[], number]> {
    const builder = this.unitOfWork
      .repository(FeatureFlag)
      .createQueryBuilder('flag')
      .leftJoinAndSelect('flag.createdBy', 'createdBy')
      .where('flag.team_id = :teamId AND NOT flag.deleted', { teamId })
      .orderBy('flag.created_at', 'DESC')
      .addOrderBy('flag.id', 'DESC')
      .skip(page.offset)
      .take(page.limit);
    if (filters.active !== undefined) builder.andWhere('flag.active = :active', { active: filters.active });
    if (filters.search) {
      builder.andWhere("(flag.key ILIKE :search ESCAPE '\\' OR flag.name ILIKE :search ESCAPE '\\')", {
        search: `%${filters.search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`,
      });
    }
    if (filters.type === 'multivariant') builder.andWhere(`${VARIANT_COUNT} > 0`);
    else if (filters.type === 'boolean') builder.andWhere(`${VARIANT_COUNT} = 0`);
    return builder.getManyAndCount();
  }

  /** The project's live flags, newest first. */
  findLive(teamId: number): Promise<FeatureFlag[]> {
    return this.unitOfWork.repository(FeatureFlag).find({
      where: { teamId, deleted: false },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /** A flag of the project, deleted or not, with its creator. */
  findInProject(teamId: number, id: number): Promise<FeatureFlag | null> {
    return this.unitOfWork.repository(FeatureFlag).findOne({
      where: { id, teamId },
      relations: { createdBy: true },
    });
  }

  insert(flag: DeepPartial<FeatureFlag>): Promise<FeatureFlag> {
    const repository = this.unitOfWork.repository(FeatureFlag);
    return repository.save(repository.create(flag));
  }

  /** Writes the flag's columns (its loaded relations are left as they are). */
  async save(flag: FeatureFlag): Promise<void> {
    const { createdBy: _createdBy, ...columns } = flag;
    await this.unitOfWork.repository(FeatureFlag).save(columns);
  }

  update(id: number, changes: Pick<DeepPartial<FeatureFlag>, 'usageDashboardId' | 'hasEnrichedAnalytics'>) {
    return this.unitOfWork.repository(FeatureFlag).update({ id }, changes);
  }

  /** PostHog frees a soft-deleted flag's key for a new flag by removing the old row. */
  async removeDeletedWithKey(teamId: number, key: string): Promise<void> {
    await this.unitOfWork.repository(FeatureFlag).delete({ teamId, key, deleted: true });
  }
}
