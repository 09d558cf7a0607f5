import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { FeatureFlag, FeatureFlagRoleAccess } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { isUniqueViolation } from '../persistence/unique-violation.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** The roles given access to a flag (PostHog's FeatureFlagRoleAccess). */
@Injectable()
export class FeatureFlagRoleAccessRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  listOfFlag(flagId: number, page: PageRequest): Promise<[FeatureFlagRoleAccess[], number]> {
    return this.unitOfWork.repository(FeatureFlagRoleAccess).findAndCount({
      where: { featureFlagId: flagId },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  findOfFlag(flagId: number, id: number): Promise<FeatureFlagRoleAccess | null> {
    return this.unitOfWork.repository(FeatureFlagRoleAccess).findOneBy({ id, featureFlagId: flagId });
  }

  /** The new link, or false when the role already has access to the flag. */
  async insert(flagId: number, roleId: string): Promise<FeatureFlagRoleAccess | false> {
    const repository = this.unitOfWork.repository(FeatureFlagRoleAccess);
    try {
      return await repository.save(repository.create({ featureFlagId: flagId, roleId }));
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** Whether the flag had that link. */
  async deleteOfFlag(flagId: number, id: number): Promise<boolean> {
    const result = await this.unitOfWork
      .repository(FeatureFlagRoleAccess)
      .delete({ id, featureFlagId: flagId });
    return Boolean(result.affected);
  }

  linksBetween(flagIds: readonly number[], roleIds: readonly string[]): Promise<FeatureFlagRoleAccess[]> {
    return this.unitOfWork
      .repository(FeatureFlagRoleAccess)
      .findBy({ featureFlagId: In(flagIds), roleId: In(roleIds) });
  }

  flagsOfRoles(roleIds: readonly string[]): Promise<{ role_id: string; id: number; key: string }[]> {
    return this.unitOfWork.manager.query<{ role_id: string; id: number; key: string }[]>(
      `SELECT a.role_id, f.id, f.key FROM feature_flag_role_access a
         JOIN feature_flags f ON f.id = a.feature_flag_id
        WHERE a.role_id = ANY($1::uuid[]) ORDER BY f.id`,
      [roleIds],
    );
  }

  /** Deleted flags too. A read of its own: the flags feature imports this module, not the reverse. */
  findFlagInProject(teamId: number, id: number): Promise<FeatureFlag | null> {
    return this.unitOfWork
      .repository(FeatureFlag)
      .findOne({ where: { id, teamId }, relations: { createdBy: true } });
  }
}
