import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { OrganizationResourceAccess, Role, type ResourceAccessLevel } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { isUniqueViolation } from '../persistence/unique-violation.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export const FEATURE_FLAGS_RESOURCE = 'feature flags';

/** Roles, and the flags level for members without a role (PostHog's OrganizationResourceAccess). */
@Injectable()
export class RoleRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Oldest first. */
  listInOrganization(organizationId: string, page: PageRequest): Promise<[Role[], number]> {
    return this.unitOfWork.repository(Role).findAndCount({
      where: { organizationId },
      relations: { createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  findInOrganization(organizationId: string, id: string): Promise<Role | null> {
    return this.unitOfWork
      .repository(Role)
      .findOne({ where: { id, organizationId }, relations: { createdBy: true } });
  }

  findByIds(ids: readonly string[]): Promise<Role[]> {
    return this.unitOfWork.repository(Role).find({ where: { id: In(ids) }, relations: { createdBy: true } });
  }

  /** A new role, or false when its organization already has the name (in any case). */
  async insert(role: Omit<Role, 'createdAt' | 'createdBy'>): Promise<Role | false> {
    const repository = this.unitOfWork.repository(Role);
    const created = repository.create(role);
    return (await this.saveUnlessTaken(created)) ? created : false;
  }

  /** Writes the role's columns; false when its new name is taken. */
  update(role: Role): Promise<boolean> {
    const { createdBy: _createdBy, ...columns } = role;
    return this.saveUnlessTaken(columns);
  }

  async delete(id: string): Promise<void> {
    await this.unitOfWork.repository(Role).delete({ id });
  }

  levelsOfMember(organizationId: string, userId: number): Promise<{ id: string; level: number }[]> {
    return this.unitOfWork.manager.query<{ id: string; level: number }[]>(
      `SELECT r.id, r.feature_flags_access_level AS level
         FROM roles r JOIN role_memberships m ON m.role_id = r.id
        WHERE r.organization_id = $1 AND m.user_id = $2`,
      [organizationId, userId],
    );
  }

  /** The organization's level for flags, or null when it set none. */
  async organizationFlagsLevel(organizationId: string): Promise<ResourceAccessLevel | null> {
    const row = await this.unitOfWork
      .repository(OrganizationResourceAccess)
      .findOneBy({ organizationId, resource: FEATURE_FLAGS_RESOURCE });
    return row?.accessLevel ?? null;
  }

  private async saveUnlessTaken(role: Omit<Role, 'createdBy' | 'createdAt'> | Role): Promise<boolean> {
    try {
      await this.unitOfWork.repository(Role).save(role);
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }
}
