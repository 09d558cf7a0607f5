import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { v7 as uuidv7 } from 'uuid';
import { MembershipLevel, type OrganizationMembership, type User } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access.decorator';
import { ApiError, notFound, permissionDenied, validationError } from '../common/api.error';
import { isUuid } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { validationErrorFrom } from '../common/validation.pipe';
import { MembershipRepository } from '../members/membership.repository';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import { UserRepository } from '../users/user.repository';
import { CreateInviteDto } from './invite.dto';
import { InviteMailerService } from './invite-mailer.service';
import { InviteResponse, isInviteExpired, presentInvite } from './invite.presenter';
import { InviteRepository } from './invite.repository';

export const MAX_BULK_INVITES = 20;

/** DRF's EmailField lowercases the domain part only. */
export function normalizeEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, at)}@${email.slice(at + 1).toLowerCase()}`.trim();
}

@Injectable()
export class InviteService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly invites: InviteRepository,
    private readonly memberships: MembershipRepository,
    private readonly users: UserRepository,
    private readonly projects: ProjectRepository,
    private readonly mailer: InviteMailerService,
  ) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
  ): Promise<{ count: number; results: InviteResponse[] }> {
    const [invites, count] = await this.invites.listPage(organization.id, page);
    return { count, results: invites.map(presentInvite) };
  }

  async create(
    caller: AccessContext,
    resolved: ResolvedOrganization,
    dto: CreateInviteDto,
  ): Promise<InviteResponse> {
    const [invite] = await this.createMany(caller, resolved, [dto]);
    return invite;
  }

  /** Every item is validated before any is created, in one transaction: all or none. */
  async bulk(
    caller: AccessContext,
    resolved: ResolvedOrganization,
    body: unknown,
  ): Promise<InviteResponse | InviteResponse[]> {
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      return this.create(caller, resolved, await this.validateItem(body));
    }
    if (!Array.isArray(body)) {
      throw validationError('This endpoint needs an array of data for bulk invite creation.');
    }
    if (body.length > MAX_BULK_INVITES) {
      throw validationError(
        `A maximum of ${MAX_BULK_INVITES} invites can be sent in a single request.`,
        null,
        'max_length',
      );
    }
    if (body.length === 0) throw validationError('This list may not be empty.', null, 'min_length');
    const items: CreateInviteDto[] = [];
    for (const item of body as unknown[]) {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        throw validationError('Invalid data. Expected a dictionary, but got a different type.');
      }
      items.push(await this.validateItem(item));
    }
    return this.createMany(caller, resolved, items);
  }

  /** A member may delete only the invites they sent, else DRF's generic 403, as in PostHog. */
  async remove(
    user: User,
    { organization, membership }: ResolvedOrganization,
    inviteId: string,
  ): Promise<void> {
    const invite = await this.invites.findInOrganization(organization.id, inviteId);
    if (!invite) throw notFound();
    if (membership.level < MembershipLevel.Admin && invite.createdById !== user.id) throw permissionDenied();
    if (!(await this.invites.deleteInOrganization(organization.id, invite.id))) throw notFound();
  }

  private async validateItem(item: object): Promise<CreateInviteDto> {
    const dto = plainToInstance(CreateInviteDto, item, { excludeExtraneousValues: false });
    const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: false });
    if (errors.length > 0) throw validationErrorFrom(errors);
    return dto;
  }

  private async createMany(
    caller: AccessContext,
    { organization, membership }: ResolvedOrganization,
    items: CreateInviteDto[],
  ): Promise<InviteResponse[]> {
    const emails = items.map((item) => normalizeEmail(item.target_email));
    const seen = new Set<string>();
    for (const email of emails) {
      if (seen.has(email.toLowerCase())) {
        throw validationError(`${email} appears more than once in this request.`, 'target_email');
      }
      seen.add(email.toLowerCase());
    }
    for (const item of items) {
      if ((item.level ?? MembershipLevel.Member) > membership.level) {
        throw permissionDenied('You cannot invite a user with a higher permission level than your own.');
      }
    }

    const invites = await this.unitOfWork.run(async () => {
      await this.refuseMembersAndDuplicates(organization.id, emails);
      return this.invites.insertMany(
        items.map((item, index) => ({
          id: uuidv7(),
          organizationId: organization.id,
          targetEmail: emails[index],
          firstName: item.first_name ?? '',
          level: item.level ?? MembershipLevel.Member,
          message: item.message ?? null,
          createdById: caller.user.id,
          emailingAttemptMade: this.mailer.available && item.send_email !== false,
        })),
      );
    });

    for (const invite of invites) {
      invite.createdBy = caller.user;
      if (invite.emailingAttemptMade) await this.mailer.send(invite, organization, caller.user);
    }
    return invites.map(presentInvite);
  }

  private async refuseMembersAndDuplicates(organizationId: string, emails: string[]): Promise<void> {
    const lowered = emails.map((email) => email.toLowerCase());
    // Two requests inviting one address would both insert: the lock makes the second wait and
    // then see the first invite on its fresh READ COMMITTED snapshot.
    await this.invites.lockAddresses(organizationId, lowered);
    if (await this.memberships.existsWithEmail(organizationId, lowered)) {
      throw validationError('A user with this email address already belongs to the organization.');
    }
    const activeInvite = await this.invites.findActiveFor(organizationId, lowered);
    if (activeInvite) {
      throw validationError(
        `An invite intended for ${activeInvite.targetEmail} is already active in this organization.`,
        'target_email',
      );
    }
  }

  /** Creates the user when new; every invite for that e-mail in the organization is consumed. */
  accept(
    inviteId: string,
    email: string,
    names: { firstName?: string; lastName?: string } = {},
  ): Promise<{ user: User; membership: OrganizationMembership }> {
    return this.unitOfWork.run(async () => {
      const invite = isUuid(inviteId) ? await this.invites.findById(inviteId) : null;
      if (!invite) throw notFound('Invite not found.');
      if (invite.targetEmail.toLowerCase() !== email.trim().toLowerCase()) {
        throw new ApiError('invalid_input', 'This invite is intended for another email address.', 'email');
      }
      if (isInviteExpired(invite)) {
        throw new ApiError('invalid_input', 'This invite has expired. Please ask your admin for a new one.');
      }
      const user =
        (await this.users.findByEmail(invite.targetEmail)) ??
        (await this.users.insert({
          email: invite.targetEmail,
          firstName: names.firstName ?? invite.firstName,
          lastName: names.lastName ?? '',
        }));
      if (await this.memberships.findOfUser(invite.organizationId, user.id)) {
        throw new ApiError('user_already_member', 'You already are a member of this organization.');
      }
      const membership = await this.memberships.insert(invite.organizationId, user.id, invite.level);
      await this.invites.deleteForAddress(invite.organizationId, invite.targetEmail);
      if (!user.currentOrganizationId) {
        await this.users.setCurrentContext(
          user.id,
          invite.organizationId,
          await this.projects.firstIdInOrganization(invite.organizationId),
        );
      }
      return { user, membership };
    });
  }
}
