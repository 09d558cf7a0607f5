import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { ManagementConfig } from '@hogbase/config';
import { Organization, OrganizationMembership, PersonalApiKey, Team, User } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access-context';
import type { PageRequest } from '../common/pagination.util';
import { MANAGEMENT_CONFIG } from '../management-config.token';
import { resetCurrentContext } from '../users/current-context.util';
import type { CreateOrganizationDto, UpdateOrganizationDto } from './organization.dto';
import { OrganizationProvisioningService } from './organization-provisioning.service';
import { OrganizationResponse, presentOrganization } from './organization.presenter';

@Injectable()
export class OrganizationService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly provisioning: OrganizationProvisioningService,
    @Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig,
  ) {}

  async list(
    caller: AccessContext,
    page: PageRequest,
  ): Promise<{ count: number; results: OrganizationResponse[] }> {
    const query = this.dataSource
      .getRepository(OrganizationMembership)
      .createQueryBuilder('membership')
      .where('membership.userId = :userId', { userId: caller.user.id });
    if (caller.apiKey.scopedOrganizations?.length) {
      query.andWhere('membership.organizationId IN (:...scoped)', {
        scoped: caller.apiKey.scopedOrganizations,
      });
    }
    // A key scoped to projects lists the organizations of those projects only.
    if (caller.apiKey.scopedTeams?.length) {
      query.andWhere(
        'membership.organizationId IN (SELECT team.organization_id FROM teams team WHERE team.id IN (:...scopedTeams))',
        { scopedTeams: caller.apiKey.scopedTeams },
      );
    }
    const [memberships, count] = await query
      .orderBy('membership.joinedAt', 'ASC')
      .addOrderBy('membership.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
    const organizations = await this.dataSource
      .getRepository(Organization)
      .findBy({ id: In(memberships.map((membership) => membership.organizationId)) });
    const byId = new Map(organizations.map((organization) => [organization.id, organization]));
    const results = await Promise.all(
      memberships.map((membership) =>
        this.present(caller.apiKey, byId.get(membership.organizationId)!, membership),
      ),
    );
    return { count, results };
  }

  async create(caller: AccessContext, dto: CreateOrganizationDto): Promise<OrganizationResponse> {
    const { organization } = await this.provisioning.createOrganization(caller.user, {
      name: dto.name,
      isMemberJoinEmailEnabled: dto.is_member_join_email_enabled,
      enforce2fa: dto.enforce_2fa,
    });
    const membership = await this.dataSource
      .getRepository(OrganizationMembership)
      .findOneByOrFail({ organizationId: organization.id, userId: caller.user.id });
    return this.present(caller.apiKey, organization, membership);
  }

  retrieve(
    caller: AccessContext,
    { organization, membership }: ResolvedOrganization,
  ): Promise<OrganizationResponse> {
    return this.present(caller.apiKey, organization, membership);
  }

  async update(
    caller: AccessContext,
    { organization, membership }: ResolvedOrganization,
    dto: UpdateOrganizationDto,
  ): Promise<OrganizationResponse> {
    if (dto.name !== undefined) organization.name = dto.name;
    if (dto.is_member_join_email_enabled !== undefined) {
      organization.isMemberJoinEmailEnabled = dto.is_member_join_email_enabled;
    }
    if (dto.enforce_2fa !== undefined) organization.enforce2fa = dto.enforce_2fa;
    await this.dataSource.getRepository(Organization).save(organization);
    return this.present(caller.apiKey, organization, membership);
  }

  /** Cascades to projects, memberships, invites and domains through the foreign keys. */
  async remove({ organization }: ResolvedOrganization): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const affected = await manager
        .getRepository(User)
        .find({ select: { id: true }, where: { currentOrganizationId: organization.id } });
      await manager.getRepository(Organization).delete({ id: organization.id });
      await resetCurrentContext(
        manager,
        affected.map((user) => user.id),
      );
    });
  }

  /** `teams` lists only the key's projects when it is scoped to some: their api_token are secrets. */
  private async present(
    apiKey: PersonalApiKey,
    organization: Organization,
    membership: OrganizationMembership,
  ): Promise<OrganizationResponse> {
    const scopedTeams = apiKey.scopedTeams?.length ? apiKey.scopedTeams : null;
    const [teams, memberCount] = await Promise.all([
      this.dataSource.getRepository(Team).find({
        where: { organizationId: organization.id, ...(scopedTeams ? { id: In(scopedTeams) } : {}) },
        order: { id: 'ASC' },
      }),
      this.dataSource
        .getRepository(OrganizationMembership)
        .createQueryBuilder('membership')
        .innerJoin('membership.user', 'user')
        .where('membership.organizationId = :organizationId', { organizationId: organization.id })
        .andWhere('user.isActive = true')
        .getCount(),
    ]);
    return presentOrganization(
      { organization, membershipLevel: membership.level, teams, memberCount },
      this.config.instanceTag,
    );
  }
}
