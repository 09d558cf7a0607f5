import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { RoleMembership } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { isUniqueViolation } from '../persistence/unique-violation.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** Who holds a role; each membership is read with its user, whom it presents. */
@Injectable()
export class RoleMembershipRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** First joined first. */
  listOfRole(roleId: string, page: PageRequest): Promise<[RoleMembership[], number]> {
    return this.unitOfWork.repository(RoleMembership).findAndCount({
      where: { roleId },
      relations: { user: true },
      order: { joinedAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  listOfRoles(roleIds: readonly string[]): Promise<RoleMembership[]> {
    return this.unitOfWork.repository(RoleMembership).find({
      where: { roleId: In(roleIds) },
      relations: { user: true },
      order: { joinedAt: 'ASC', id: 'ASC' },
    });
  }

  /** The new membership, or false when the user already holds the role. */
  async insert(roleId: string, userId: number): Promise<RoleMembership | false> {
    const repository = this.unitOfWork.repository(RoleMembership);
    const id = uuidv7();
    try {
      await repository.insert({ id, roleId, userId });
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
    return repository.findOneOrFail({ where: { id }, relations: { user: true } });
  }

  /** Whether the role had that membership. */
  async delete(roleId: string, id: string): Promise<boolean> {
    const result = await this.unitOfWork.repository(RoleMembership).delete({ id, roleId });
    return Boolean(result.affected);
  }
}
