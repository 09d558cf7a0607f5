import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  generateProjectApiToken,
  Organization,
  OrganizationMembership,
  PluginsAccessLevel,
  Team,
} from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export type NewOrganizationRow = Pick<
  Organization,
  'name' | 'slug' | 'isMemberJoinEmailEnabled' | 'enforce2fa' | 'pluginsAccessLevel'
>;

/**
 * Organizations, and the few reads and the insert of their projects that provisioning and the
 * organization's answer need. Those stay here rather than in the projects feature's repository
 * because that feature imports this one (it creates projects through provisioning).
 */
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

  async insertProject(organizationId: string, name: string, timezone: string): Promise<Team> {
    const teams = this.unitOfWork.repository(Team);
    return teams.save(
      teams.create({ uuid: uuidv7(), organizationId, name, timezone, apiToken: generateProjectApiToken() }),
    );
  }

  /** The organization's projects by id, only `teamIds` among them when given. */
  listProjects(organizationId: string, teamIds: number[] | null): Promise<Team[]> {
    return this.unitOfWork.repository(Team).find({
      where: { organizationId, ...(teamIds ? { id: In(teamIds) } : {}) },
      order: { id: 'ASC' },
    });
  }

  /** The oldest project of that name in the organization. */
  findProjectNamed(organizationId: string, name: string): Promise<Team | null> {
    return this.unitOfWork
      .repository(Team)
      .findOne({ where: { organizationId, name }, order: { id: 'ASC' } });
  }

  /** The organization's first project, the one a new member's `@current` points at. */
  async firstProjectId(organizationId: string): Promise<number | null> {
    const rows = await this.unitOfWork.manager.query<{ id: number }[]>(
      'SELECT id FROM teams WHERE organization_id = $1 ORDER BY id LIMIT 1',
      [organizationId],
    );
    return rows[0]?.id ?? null;
  }
}
