import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { Organization, OrganizationMembership, PluginsAccessLevel } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export type NewOrganizationRow = Pick<
  Organization,
  'name' | 'slug' | 'isMemberJoinEmailEnabled' | 'enforce2fa' | 'pluginsAccessLevel'
>;

@Injectable()
export class OrganizationRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  async insert(row: NewOrganizationRow): Promise<Organization> {
    const organizations = this.unitOfWork.repository(Organization);
    return organizations.save(organizations.create({ id: uuidv7(), ...row }));
  }

  findById(id: string): Promise<Organization | null> {
    return this.unitOfWork.repository(Organization).findOneBy({ id });
  }

  findByIds(ids: string[]): Promise<Organization[]> {
    return this.unitOfWork.repository(Organization).findBy({ id: In(ids) });
  }

  /** The names of these organizations, by id. */
  async namesByIds(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const organizations = await this.unitOfWork.repository(Organization).find({
      select: { id: true, name: true },
      where: { id: In(ids) },
    });
    return new Map(organizations.map((organization) => [organization.id, organization.name]));
  }

  /** The oldest organization of that name the user is a member of. */
  findOfMemberNamed(userId: number, name: string): Promise<Organization | null> {
    return this.unitOfWork
      .repository(Organization)
      .createQueryBuilder('organization')
      .innerJoin(OrganizationMembership, 'membership', 'membership.organization_id = organization.id')
      .where('membership.user_id = :userId', { userId })
      .andWhere('organization.name = :name', { name })
      .orderBy('organization.created_at', 'ASC')
      .getOne();
  }

  /** Which of these slugs an organization already has. */
  async takenSlugs(candidates: string[]): Promise<Set<string>> {
    const taken = await this.unitOfWork
      .repository(Organization)
      .createQueryBuilder('organization')
      .select('organization.slug', 'slug')
      .where('organization.slug IN (:...candidates)', { candidates })
      .getRawMany<{ slug: string }>();
    return new Set(taken.map((row) => row.slug));
  }

  async save(organization: Organization): Promise<void> {
    await this.unitOfWork.repository(Organization).save(organization);
  }

  async setPluginsAccessLevel(id: string, pluginsAccessLevel: PluginsAccessLevel): Promise<void> {
    await this.unitOfWork.repository(Organization).update({ id }, { pluginsAccessLevel });
  }

  /** Cascades to projects, memberships, invites and domains through the foreign keys. */
  async delete(id: string): Promise<void> {
    await this.unitOfWork.repository(Organization).delete({ id });
  }
}
