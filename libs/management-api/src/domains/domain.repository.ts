import { Injectable } from '@nestjs/common';
import { OrganizationDomain } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { isUniqueViolation } from '../persistence/unique-violation.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

@Injectable()
export class DomainRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** By name. */
  listPage(organizationId: string, page: PageRequest): Promise<[OrganizationDomain[], number]> {
    return this.unitOfWork.repository(OrganizationDomain).findAndCount({
      where: { organizationId },
      order: { domain: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  findInOrganization(organizationId: string, id: string): Promise<OrganizationDomain | null> {
    return this.unitOfWork.repository(OrganizationDomain).findOneBy({ id, organizationId });
  }

  create(fields: Partial<OrganizationDomain>): OrganizationDomain {
    return this.unitOfWork.repository(OrganizationDomain).create(fields);
  }

  async save(domain: OrganizationDomain): Promise<void> {
    await this.unitOfWork.repository(OrganizationDomain).save(domain);
  }

  /**
   * Saves the domain unless another organization's (or this one's) domain has its name, which the
   * unique index decides; returns whether it was saved.
   */
  async saveIfNameFree(domain: OrganizationDomain): Promise<boolean> {
    try {
      await this.save(domain);
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async delete(id: string): Promise<void> {
    await this.unitOfWork.repository(OrganizationDomain).delete({ id });
  }
}
