import { Injectable } from '@nestjs/common';
import { OrganizationInvite } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { INVITE_VALIDITY_DAYS } from './invite.presenter';

export type NewInviteRow = Pick<
  OrganizationInvite,
  | 'id'
  | 'organizationId'
  | 'targetEmail'
  | 'firstName'
  | 'level'
  | 'message'
  | 'createdById'
  | 'emailingAttemptMade'
>;

@Injectable()
export class InviteRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Newest first, with who sent each. */
  listPage(organizationId: string, page: PageRequest): Promise<[OrganizationInvite[], number]> {
    return this.unitOfWork.repository(OrganizationInvite).findAndCount({
      where: { organizationId },
      relations: { createdBy: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  findById(id: string): Promise<OrganizationInvite | null> {
    return this.unitOfWork.repository(OrganizationInvite).findOneBy({ id });
  }

  findInOrganization(organizationId: string, id: string): Promise<OrganizationInvite | null> {
    return this.unitOfWork.repository(OrganizationInvite).findOneBy({ id, organizationId });
  }

  async insertMany(rows: NewInviteRow[]): Promise<OrganizationInvite[]> {
    const invites = this.unitOfWork.repository(OrganizationInvite);
    const created = rows.map((row) => invites.create(row));
    await invites.save(created);
    return created;
  }

  /** Whether it was still there to delete. */
  async deleteInOrganization(organizationId: string, id: string): Promise<boolean> {
    const result = await this.unitOfWork.repository(OrganizationInvite).delete({ id, organizationId });
    return Boolean(result.affected);
  }

  /** Consumes every invite for the address in the organization. */
  async deleteForAddress(organizationId: string, email: string): Promise<void> {
    await this.unitOfWork.manager
      .createQueryBuilder()
      .delete()
      .from(OrganizationInvite)
      .where('organization_id = :organizationId', { organizationId })
      .andWhere('lower(target_email) = lower(:email)', { email })
      .execute();
  }

  /**
   * Holds, until the caller's transaction ends, a lock per (organization, address), taken in a fixed
   * order so that two bulk requests cannot deadlock.
   */
  async lockAddresses(organizationId: string, loweredEmails: string[]): Promise<void> {
    for (const email of [...new Set(loweredEmails)].sort()) {
      await this.unitOfWork.manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `invite:${organizationId}:${email}`,
      ]);
    }
  }

  /** An invite for one of these addresses (lowercased) that has not expired yet. */
  findActiveFor(organizationId: string, loweredEmails: string[]): Promise<OrganizationInvite | null> {
    return this.unitOfWork
      .repository(OrganizationInvite)
      .createQueryBuilder('invite')
      .where('invite.organizationId = :organizationId', { organizationId })
      .andWhere('lower(invite.targetEmail) IN (:...lowered)', { lowered: loweredEmails })
      .andWhere('invite.createdAt >= now() - CAST(:validity AS interval)', {
        validity: `${INVITE_VALIDITY_DAYS} days`,
      })
      .getOne();
  }
}
