import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access-context';
import { notFound, permissionDenied, validationError } from '../common/api-error';
import { isUuid } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { resetCurrentContext } from '../users/current-context.util';
import { MemberResponse, presentMember } from './member.presenter';

type MembershipWithUser = OrganizationMembership & { user: User };

/**
 * PostHog's `OrganizationMembership.validate_update`: who may change (or, with no new level,
 * remove) whose membership. Each refusal is a 403 with PostHog's message. Nothing but the level
 * rules applies to your own membership.
 */
export function validateMembershipUpdate(
  requester: OrganizationMembership,
  target: OrganizationMembership,
  newLevel?: MembershipLevel,
): void {
  if (newLevel !== undefined) {
    if (target.id === requester.id) throw permissionDenied("You can't change your own access level.");
    if (newLevel === MembershipLevel.Owner && requester.level !== MembershipLevel.Owner) {
      throw permissionDenied("You can only make another member owner if you're this organization's owner.");
    }
    if (newLevel > requester.level) {
      throw permissionDenied(
        'You can only change access level of others to lower or equal to your current one.',
      );
    }
  }
  if (target.id === requester.id) return;
  if (requester.organizationId !== target.organizationId) {
    throw permissionDenied('You both need to belong to the same organization.');
  }
  if (requester.level < MembershipLevel.Admin)
    throw permissionDenied('You can only edit others if you are an admin.');
  if (target.level > requester.level) {
    throw permissionDenied('You can only edit others with level lower or equal to you.');
  }
}

@Injectable()
export class MemberService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
    filters: { email?: string },
  ): Promise<{ count: number; results: MemberResponse[] }> {
    const query = this.dataSource
      .getRepository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoinAndSelect('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId: organization.id })
      .andWhere('user.isActive = true');
    if (filters.email) query.andWhere('lower(user.email) = lower(:email)', { email: filters.email });
    const [memberships, count] = await query
      .orderBy('membership.joinedAt', 'DESC')
      .addOrderBy('membership.id', 'DESC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
    return {
      count,
      results: memberships.map((membership) => presentMember(membership as MembershipWithUser)),
    };
  }

  /**
   * As PostHog: the object permission (the rules without a level) runs first, so a member editing
   * someone else hears "only if you are an admin" whatever level they asked for; then the level rules.
   */
  async update(
    caller: AccessContext,
    resolved: ResolvedOrganization,
    userUuid: string,
    level?: MembershipLevel,
  ) {
    const target = await this.findTarget(caller, resolved, userUuid);
    validateMembershipUpdate(resolved.membership, target);
    if (level === undefined) return presentMember(target);
    validateMembershipUpdate(resolved.membership, target, level);
    target.level = level;
    await this.dataSource.getRepository(OrganizationMembership).save(target);
    return presentMember(target);
  }

  /** Removing someone else needs the update rules; leaving is open to anyone but an owner. */
  async remove(caller: AccessContext, resolved: ResolvedOrganization, userUuid: string): Promise<void> {
    const target = await this.findTarget(caller, resolved, userUuid);
    validateMembershipUpdate(resolved.membership, target);
    if (target.level === MembershipLevel.Owner) {
      throw validationError('Cannot leave the organization as its owner!');
    }
    await this.dataSource.transaction(async (manager) => {
      await manager.getRepository(OrganizationMembership).delete({ id: target.id });
      if (target.user.currentOrganizationId === target.organizationId) {
        await resetCurrentContext(manager, [target.userId]);
      }
    });
  }

  private async findTarget(
    caller: AccessContext,
    { organization }: ResolvedOrganization,
    userUuid: string,
  ): Promise<MembershipWithUser> {
    const uuid = userUuid === '@me' ? caller.user.uuid : userUuid;
    if (!isUuid(uuid)) throw notFound();
    const target = await this.dataSource
      .getRepository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoinAndSelect('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId: organization.id })
      .andWhere('user.uuid = :uuid', { uuid })
      .andWhere('user.isActive = true')
      .getOne();
    if (!target) throw notFound();
    return target as MembershipWithUser;
  }
}
