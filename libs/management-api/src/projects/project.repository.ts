import { Injectable } from '@nestjs/common';
import { In, type DeepPartial } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  generateProjectApiToken,
  type MembershipLevel,
  OrganizationMembership,
  Team,
} from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** Which projects a user's list holds: the organizations and projects a key is narrowed to. */
export interface ProjectListFilter {
  userId: number;
  organizationId?: string;
  scopedOrganizations?: readonly string[] | null;
  scopedTeams?: readonly number[] | null;
}

/** A new project's columns; the repository gives it its uuid and an API token of its own. */
export type NewProjectRow = Omit<DeepPartial<Team>, 'id' | 'uuid' | 'apiToken'> &
  Pick<Team, 'organizationId' | 'name' | 'timezone'>;

/** Projects (PostHog's teams), for their own routes and for every feature that reads them. */
@Injectable()
export class ProjectRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The projects of every organization the user belongs to, by id, with the user's level in each. */
  async listForMember(
    filter: ProjectListFilter,
    page: PageRequest,
  ): Promise<{ count: number; results: { team: Team; level: MembershipLevel }[] }> {
    const query = this.unitOfWork
      .repository(Team)
      .createQueryBuilder('team')
      .innerJoin(OrganizationMembership, 'membership', 'membership.organization_id = team.organization_id')
      .addSelect('membership.level', 'membership_level')
      .where('membership.user_id = :userId', { userId: filter.userId });
    if (filter.organizationId) {
      query.andWhere('team.organization_id = :organizationId', { organizationId: filter.organizationId });
    }
    if (filter.scopedOrganizations?.length) {
      query.andWhere('team.organization_id IN (:...scopedOrganizations)', {
        scopedOrganizations: filter.scopedOrganizations,
      });
    }
    if (filter.scopedTeams?.length) {
      query.andWhere('team.id IN (:...scopedTeams)', { scopedTeams: filter.scopedTeams });
    }
    const count = await query.getCount();
    const { entities, raw } = await query
      .orderBy('team.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getRawAndEntities<{ membership_level: MembershipLevel }>();
    return {
      count,
      results: entities.map((team, index) => ({ team, level: raw[index].membership_level })),
    };
  }

  /** The organization's projects by id, only `teamIds` among them when given. */
  listInOrganization(organizationId: string, teamIds: number[] | null): Promise<Team[]> {
    return this.unitOfWork.repository(Team).find({
      where: { organizationId, ...(teamIds ? { id: In(teamIds) } : {}) },
      order: { id: 'ASC' },
    });
  }

  async idsInOrganization(organizationId: string): Promise<number[]> {
    const teams = await this.unitOfWork.repository(Team).find({
      select: { id: true },
      where: { organizationId },
    });
    return teams.map((team) => team.id);
  }

  countInOrganization(organizationId: string): Promise<number> {
    return this.unitOfWork.repository(Team).count({ where: { organizationId } });
  }

  /** The organization's first project, the one a new member's `@current` points at. */
  async firstIdInOrganization(organizationId: string): Promise<number | null> {
    const rows = await this.unitOfWork.manager.query<{ id: number }[]>(
      'SELECT id FROM teams WHERE organization_id = $1 ORDER BY id LIMIT 1',
      [organizationId],
    );
    return rows[0]?.id ?? null;
  }

  /** The oldest project of that name in the organization. */
  findNamed(organizationId: string, name: string): Promise<Team | null> {
    return this.unitOfWork
      .repository(Team)
      .findOne({ where: { organizationId, name }, order: { id: 'ASC' } });
  }

  async timezoneOf(id: number): Promise<string> {
    return (await this.unitOfWork.repository(Team).findOneByOrFail({ id })).timezone;
  }

  insert(row: NewProjectRow): Promise<Team> {
    const teams = this.unitOfWork.repository(Team);
    return teams.save(teams.create({ uuid: uuidv7(), ...row, apiToken: generateProjectApiToken() }));
  }

  save(team: Team): Promise<Team> {
    return this.unitOfWork.repository(Team).save(team);
  }

  /** Holds the project's row until the transaction ends: serializes writes that check a per-project limit. */
  async lock(id: number): Promise<void> {
    await this.unitOfWork.manager.query('SELECT id FROM teams WHERE id = $1 FOR UPDATE', [id]);
  }

  async delete(id: number): Promise<void> {
    await this.unitOfWork.repository(Team).delete({ id });
  }
}
