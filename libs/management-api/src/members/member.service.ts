import { Injectable } from '@nestjs/common';
import { MembershipLevel, type OrganizationMembership } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access.decorator';
import { notFound, permissionDenied, validationError } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { UserRepository } from '../users/user.repository';
import { CURRENT_USER_ALIAS } from './member-uuid.pipe';
import { MemberResponse, presentMember } from './member.presenter';
import { MembershipRepository, type MembershipWithUser } from './membership.repository';

/**
 * PostHog's `OrganizationMembership.validate_update` (posthog/models/organization.py); with no new
 * level it checks a removal. Each refusal is a 403 with PostHog's message.
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
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly memberships: MembershipRepository,
    private readonly users: UserRepository,
  ) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
    filters: { email?: string },
  ): Promise<{ count: number; results: MemberResponse[] }> {
    const [memberships, count] = await this.memberships.listActive(organization.id, filters, page);
    return { count, results: memberships.map(presentMember) };
  }

  /** As PostHog, the object permission runs before the level rules. */
  async update(
    caller: AccessContext,
    resolved: ResolvedOrganization,
    userUuid: string | null,
    level?: MembershipLevel,
  ): Promise<MemberResponse> {
    const target = await this.findTarget(caller, resolved, userUuid);
    validateMembershipUpdate(resolved.membership, target);
    if (level === undefined) return presentMember(target);
    validateMembershipUpdate(resolved.membership, target, level);
    target.level = level;
    await this.memberships.save(target);
    return presentMember(target);
  }

  /** Removing someone else needs the update rules; leaving is open to anyone but an owner. */
  async remove(caller: AccessContext, resolved: ResolvedOrganization, userUuid: string): Promise<void> {
    const target = await this.findTarget(caller, resolved, userUuid);
    validateMembershipUpdate(resolved.membership, target);
    if (target.level === MembershipLevel.Owner) {
      throw validationError('Cannot leave the organization as its owner!');
    }
    await this.unitOfWork.run(async () => {
      await this.memberships.delete(target.id);
      if (target.user.currentOrganizationId === target.organizationId) {
        await this.users.resetCurrentContext([target.userId]);
      }
    });
  }

  /** `userUuid` is null when malformed; a user outside the organization is a 404. */
  private async findTarget(
    caller: AccessContext,
    { organization }: ResolvedOrganization,
    userUuid: string | null,
  ): Promise<MembershipWithUser> {
    if (userUuid === null) throw notFound();
    const uuid = userUuid === CURRENT_USER_ALIAS ? caller.user.uuid : userUuid;
    const target = await this.memberships.findActiveByUserUuid(organization.id, uuid);
    if (!target) throw notFound();
    return target;
  }
}
