import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { Organization, OrganizationMembership, Team } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/**
 * The reads that resolve what a request names: its project, its organization and the caller's
 * membership there. They live here rather than in the organizations and projects features because
 * every route passes the guard, and those features' modules depend on this one.
 */
@Injectable()
export class AccessRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findProject(id: number): Promise<Team | null> {
    return this.unitOfWork.repository(Team).findOne({ where: { id } });
  }

  findMembership(organizationId: string, userId: number): Promise<OrganizationMembership | null> {
    return this.unitOfWork.repository(OrganizationMembership).findOne({ where: { organizationId, userId } });
  }

  /** An organization the caller's membership proved exists. */
  getOrganization(id: string): Promise<Organization> {
    return this.unitOfWork.repository(Organization).findOneOrFail({ where: { id } });
  }

  /** Whether one of `teamIds` is a project of the organization. */
  organizationHasProject(organizationId: string, teamIds: readonly number[]): Promise<boolean> {
    return this.unitOfWork.repository(Team).exists({ where: { organizationId, id: In([...teamIds]) } });
  }
}
