import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { Organization, Team } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/**
 * The reads of projects and organizations that resolve what a request names. They live here
 * rather than in the organizations and projects features' repositories because every route passes
 * the guard, and those features' modules import this one.
 */
@Injectable()
export class AccessRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findProject(id: number): Promise<Team | null> {
    return this.unitOfWork.repository(Team).findOne({ where: { id } });
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
