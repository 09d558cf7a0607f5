import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export type MembershipWithUser = OrganizationMembership & { user: User };

/** What a personal API key is restricted to, as it narrows the organizations a user sees. */
export interface KeyScope {
  scopedOrganizations: string[] | null;
  scopedTeams: number[] | null;
}

/** Organization memberships: who belongs to which organization, at which level. */
@Injectable()
export class MembershipRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  async insert(
    organizationId: string,
    userId: number,
    level: MembershipLevel,
  ): Promise<OrganizationMembership> {
    const memberships = this.unitOfWork.repository(OrganizationMembership);
    return memberships.save(memberships.create({ id: uuidv7(), organizationId, userId, level }));
  }

  findOfUser(organizationId: string, userId: number): Promise<OrganizationMembership | null> {
    return this.unitOfWork.repository(OrganizationMembership).findOneBy({ organizationId, userId });
  }

  /** The user's memberships, oldest first, within the organizations a key is scoped to. */
  listOfUser(
    userId: number,
    scope: KeyScope,
    page: PageRequest,
  ): Promise<[OrganizationMembership[], number]> {
    const query = this.unitOfWork
      .repository(OrganizationMembership)
      .createQueryBuilder('membership')
      .where('membership.userId = :userId', { userId });
    if (scope.scopedOrganizations?.length) {
      query.andWhere('membership.organizationId IN (:...scoped)', { scoped: scope.scopedOrganizations });
    }
    // A key scoped to projects reaches the organizations of those projects only.
    if (scope.scopedTeams?.length) {
      query.andWhere(
        'membership.organizationId IN (SELECT team.organization_id FROM teams team WHERE team.id IN (:...scopedTeams))',
        { scopedTeams: scope.scopedTeams },
      );
    }
    return query
      .orderBy('membership.joinedAt', 'ASC')
      .addOrderBy('membership.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }

  /** Members whose user is active, newest first; `email` matches case-insensitively. */
  async listActive(
    organizationId: string,
    filters: { email?: string },
    page: PageRequest,
  ): Promise<[MembershipWithUser[], number]> {
    const query = this.unitOfWork
      .repository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoinAndSelect('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId })
      .andWhere('user.isActive = true');
    if (filters.email) query.andWhere('lower(user.email) = lower(:email)', { email: filters.email });
    const [memberships, count] = await query
      .orderBy('membership.joinedAt', 'DESC')
      .addOrderBy('membership.id', 'DESC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
    return [memberships as MembershipWithUser[], count];
  }

  countActive(organizationId: string): Promise<number> {
    return this.unitOfWork
      .repository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoin('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId })
      .andWhere('user.isActive = true')
      .getCount();
  }

  findActiveByUserUuid(organizationId: string, userUuid: string): Promise<MembershipWithUser | null> {
    return this.findByUserUuid(organizationId, userUuid, { activeOnly: true });
  }

  /** The user with that UUID if they belong to the organization, active or not. */
  async findUserInOrganization(organizationId: string, userUuid: string): Promise<User | null> {
    return (await this.findByUserUuid(organizationId, userUuid, { activeOnly: false }))?.user ?? null;
  }

  private async findByUserUuid(
    organizationId: string,
    userUuid: string,
    { activeOnly }: { activeOnly: boolean },
  ): Promise<MembershipWithUser | null> {
    const query = this.unitOfWork
      .repository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoinAndSelect('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId })
      .andWhere('user.uuid = :uuid', { uuid: userUuid });
    if (activeOnly) query.andWhere('user.isActive = true');
    return (await query.getOne()) as MembershipWithUser | null;
  }

  /** Whether a user with one of these e-mails (lowercased) belongs to the organization. */
  existsWithEmail(organizationId: string, loweredEmails: string[]): Promise<boolean> {
    return this.unitOfWork
      .repository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoin('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId })
      .andWhere('lower(user.email) IN (:...lowered)', { lowered: loweredEmails })
      .getExists();
  }

  async save(membership: OrganizationMembership): Promise<void> {
    await this.unitOfWork.repository(OrganizationMembership).save(membership);
  }

  async delete(id: string): Promise<void> {
    await this.unitOfWork.repository(OrganizationMembership).delete({ id });
  }

  /** Which of `organizationIds` the user belongs to (compared as text: a malformed id matches none). */
  async organizationIdsOf(userId: number, organizationIds: string[]): Promise<string[]> {
    const rows = await this.unitOfWork.manager.query<{ organization_id: string }[]>(
      `SELECT organization_id::text FROM organization_memberships WHERE user_id = $1 AND organization_id::text = ANY($2::text[])`,
      [userId, organizationIds],
    );
    return rows.map((row) => row.organization_id);
  }

  /** Which of `teamIds` belong to an organization the user is a member of. */
  async teamIdsReachableBy(userId: number, teamIds: number[]): Promise<number[]> {
    const rows = await this.unitOfWork.manager.query<{ id: number }[]>(
      `SELECT t.id FROM teams t JOIN organization_memberships m ON m.organization_id = t.organization_id
        WHERE m.user_id = $1 AND t.id = ANY($2::int[])`,
      [userId, teamIds],
    );
    return rows.map((row) => row.id);
  }
}
