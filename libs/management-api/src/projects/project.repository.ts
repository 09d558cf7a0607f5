import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { type MembershipLevel, OrganizationMembership, Team, User } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** Which projects a user's list holds: the organizations and projects a key is narrowed to. */
export interface ProjectListFilter {
  userId: number;
  organizationId?: string;
  scopedOrganizations?: readonly string[] | null;
  scopedTeams?: readonly number[] | null;
}

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

  insert(values: DeepPartial<Team>): Promise<Team> {
    const repository = this.unitOfWork.repository(Team);
    return repository.save(repository.create(values));
  }

  save(team: Team): Promise<Team> {
    return this.unitOfWork.repository(Team).save(team);
  }

  /** Holds the project's row until the transaction ends: serializes writes that check a per-project limit. */
  async lock(id: number): Promise<void> {
    await this.unitOfWork.manager.query('SELECT id FROM teams WHERE id = $1 FOR UPDATE', [id]);
  }

  /**
   * Deletes the project; users whose current project it was move to the first project of their
   * current organization. The users' column is written here, in the same statement set, because
   * it points at this table.
   */
  async deleteMovingCurrentUsers(id: number): Promise<void> {
    const manager = this.unitOfWork.manager;
    const affected = await manager
      .getRepository(User)
      .find({ select: { id: true }, where: { currentTeamId: id } });
    await manager.getRepository(Team).delete({ id });
    await manager.query(
      `UPDATE users SET current_team_id = (
         SELECT t.id FROM teams t WHERE t.organization_id = users.current_organization_id ORDER BY t.id LIMIT 1
       ) WHERE id = ANY($1::int[])`,
      [affected.map((user) => user.id)],
    );
  }
}
