import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { MembershipLevel, OrganizationInvite, OrganizationMembership, User } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access-context';
import { ApiError, notFound, permissionDenied, validationError } from '../common/api-error';
import { isUuid } from '../common/iso.util';
import type { PageRequest } from '../common/pagination.util';
import { validationErrorFrom } from '../common/validation.pipe';
import { CreateInviteDto } from './invite.dto';
import { InviteMailerService } from './invite-mailer.service';
import { InviteResponse, presentInvite } from './invite.presenter';

export const MAX_BULK_INVITES = 20;

/** DRF's EmailField lowercases the domain part only. */
export function normalizeEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, at)}@${email.slice(at + 1).toLowerCase()}`.trim();
}

@Injectable()
export class InviteService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly mailer: InviteMailerService,
  ) {}

  async list(
    { organization }: ResolvedOrganization,
    page: PageRequest,
  ): Promise<{ count: number; results: InviteResponse[] }> {
    const [invites, count] = await this.dataSource.getRepository(OrganizationInvite).findAndCount({
      where: { organizationId: organization.id },
      relations: { createdBy: true },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
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

  /**
   * `bulk/` takes a JSON array (at most 20) or a single object. Every item is validated before
   * any is created, and all are created in one transaction: either all invites exist or none.
   */
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

  /**
   * An admin (or the owner) may delete any invite of the organization; a member only the invites
   * they sent. PostHog refuses the others with DRF's generic 403 (its UserCanInvitePermission).
   */
  async remove(
    user: User,
    { organization, membership }: ResolvedOrganization,
    inviteId: string,
  ): Promise<void> {
    if (!isUuid(inviteId)) throw notFound();
    const invites = this.dataSource.getRepository(OrganizationInvite);
    const invite = await invites.findOneBy({ id: inviteId, organizationId: organization.id });
    if (!invite) throw notFound();
    if (membership.level < MembershipLevel.Admin && invite.createdById !== user.id) throw permissionDenied();
    const result = await invites.delete({ id: invite.id, organizationId: organization.id });
    if (!result.affected) throw notFound();
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

    const invites = await this.dataSource.transaction(async (manager) => {
      await this.refuseMembersAndDuplicates(manager, organization.id, emails);
      const created = items.map((item, index) =>
        manager.create(OrganizationInvite, {
          id: uuidv7(),
          organizationId: organization.id,
          targetEmail: emails[index],
          firstName: item.first_name ?? '',
          level: item.level ?? MembershipLevel.Member,
          message: item.message ?? null,
          createdById: caller.user.id,
          emailingAttemptMade: this.mailer.available && item.send_email !== false,
        }),
      );
      await manager.save(created);
      return created;
    });

    for (const invite of invites) {
      invite.createdBy = caller.user;
      if (invite.emailingAttemptMade) await this.mailer.send(invite, organization, caller.user);
    }
    return invites.map(presentInvite);
  }

  private async refuseMembersAndDuplicates(
    manager: EntityManager,
    organizationId: string,
    emails: string[],
  ): Promise<void> {
    const lowered = emails.map((email) => email.toLowerCase());
    // TRICKY: two requests inviting one address at once would both find no active invite and both
    // insert. A transaction-scoped lock per (organization, address), taken in a fixed order so that
    // bulk requests cannot deadlock, makes the second wait for the first to commit; its queries then
    // run on a fresh READ COMMITTED snapshot and see the first invite.
    for (const email of [...new Set(lowered)].sort()) {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `invite:${organizationId}:${email}`,
      ]);
    }
    const member = await manager
      .getRepository(OrganizationMembership)
      .createQueryBuilder('membership')
      .innerJoin('membership.user', 'user')
      .where('membership.organizationId = :organizationId', { organizationId })
      .andWhere('lower(user.email) IN (:...lowered)', { lowered })
      .getExists();
    if (member) throw validationError('A user with this email address already belongs to the organization.');
    const activeInvite = await manager
      .getRepository(OrganizationInvite)
      .createQueryBuilder('invite')
      .where('invite.organizationId = :organizationId', { organizationId })
      .andWhere('lower(invite.targetEmail) IN (:...lowered)', { lowered })
      .andWhere(`invite.createdAt >= now() - interval '3 days'`)
      .getOne();
    if (activeInvite) {
      throw validationError(
        `An invite intended for ${activeInvite.targetEmail} is already active in this organization.`,
        'target_email',
      );
    }
  }

  /**
   * Turns an invite into a membership (the admin CLI's accept-invite): the invited person's user is
   * created when new, joins at the invite's level, and every invite for that e-mail in the
   * organization is consumed.
   */
  async accept(inviteId: string, email: string, names: { firstName?: string; lastName?: string } = {}) {
    return this.dataSource.transaction(async (manager) => {
      const invite = isUuid(inviteId)
        ? await manager.getRepository(OrganizationInvite).findOneBy({ id: inviteId })
        : null;
      if (!invite) throw notFound('Invite not found.');
      if (invite.targetEmail.toLowerCase() !== email.trim().toLowerCase()) {
        throw new ApiError('invalid_input', 'This invite is intended for another email address.', 'email');
      }
      if (invite.createdAt.getTime() < Date.now() - 3 * 24 * 60 * 60 * 1000) {
        throw new ApiError('invalid_input', 'This invite has expired. Please ask your admin for a new one.');
      }
      let user = await manager
        .getRepository(User)
        .createQueryBuilder('user')
        .where('lower(user.email) = lower(:email)', { email: invite.targetEmail })
        .getOne();
      if (!user) {
        const uuid = uuidv7();
        user = await manager.save(
          manager.create(User, {
            uuid,
            distinctId: uuid,
            email: invite.targetEmail,
            firstName: names.firstName ?? invite.firstName,
            lastName: names.lastName ?? '',
          }),
        );
      }
      const existing = await manager
        .getRepository(OrganizationMembership)
        .findOneBy({ organizationId: invite.organizationId, userId: user.id });
      if (existing)
        throw new ApiError('user_already_member', 'You already are a member of this organization.');
      const membership = await manager.save(
        manager.create(OrganizationMembership, {
          id: uuidv7(),
          organizationId: invite.organizationId,
          userId: user.id,
          level: invite.level,
        }),
      );
      await manager
        .createQueryBuilder()
        .delete()
        .from(OrganizationInvite)
        .where('organization_id = :organizationId', { organizationId: invite.organizationId })
        .andWhere('lower(target_email) = lower(:email)', { email: invite.targetEmail })
        .execute();
      if (!user.currentOrganizationId) {
        const team = await manager.query<{ id: number }[]>(
          'SELECT id FROM teams WHERE organization_id = $1 ORDER BY id LIMIT 1',
          [invite.organizationId],
        );
        await manager.update(
          User,
          { id: user.id },
          {
            currentOrganizationId: invite.organizationId,
            currentTeamId: team[0]?.id ?? null,
          },
        );
      }
      return { user, membership };
    });
  }
}
