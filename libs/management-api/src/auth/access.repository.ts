import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { Organization, Team } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** Here rather than in the organizations and projects features, whose modules import this one. */
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

  organizationHasProject(organizationId: string, teamIds: readonly number[]): Promise<boolean> {
    return this.unitOfWork.repository(Team).exists({ where: { organizationId, id: In([...teamIds]) } });
  }
}
