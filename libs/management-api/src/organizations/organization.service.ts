import { Inject, Injectable } from '@nestjs/common';
import type { ManagementConfig } from '@hogbase/config';
import type { Organization, OrganizationMembership, PersonalApiKey } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization } from '../auth/access.decorator';
import type { PageRequest } from '../common/pagination.util';
import { MANAGEMENT_CONFIG } from '../management-config.constants';
import { MembershipRepository } from '../members/membership.repository';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import { UserRepository } from '../users/user.repository';
import type { CreateOrganizationDto, UpdateOrganizationDto } from './organization.dto';
import { OrganizationProvisioningService } from './organization-provisioning.service';
import { OrganizationResponse, presentOrganization } from './organization.presenter';
import { OrganizationRepository } from './organization.repository';

@Injectable()
export class OrganizationService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly organizations: OrganizationRepository,
    private readonly memberships: MembershipRepository,
    private readonly projects: ProjectRepository,
    private readonly users: UserRepository,
    private readonly provisioning: OrganizationProvisioningService,
    @Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig,
  ) {}

  /** The caller's organizations, within the organizations and projects the key is scoped to. */
  async list(
    caller: AccessContext,
    page: PageRequest,
  ): Promise<{ count: number; results: OrganizationResponse[] }> {
    const [memberships, count] = await this.memberships.listOfUser(caller.user.id, caller.apiKey, page);
    const organizations = await this.organizations.findByIds(
      memberships.map((membership) => membership.organizationId),
    );
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
    const membership = await this.memberships.findOfUser(organization.id, caller.user.id);
    return this.present(caller.apiKey, organization, membership!);
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
    await this.organizations.save(organization);
    return this.present(caller.apiKey, organization, membership);
  }

  /** Deleting cascades to everything the organization holds; its members' `@current` moves on. */
  async remove({ organization }: ResolvedOrganization): Promise<void> {
    await this.unitOfWork.run(async () => {
      const affected = await this.users.idsWithCurrentOrganization(organization.id);
      await this.organizations.delete(organization.id);
      await this.users.resetCurrentContext(affected);
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
      this.projects.listInOrganization(organization.id, scopedTeams),
      this.memberships.countActive(organization.id),
    ]);
    return presentOrganization(
      { organization, membershipLevel: membership.level, teams, memberCount },
      this.config.instanceTag,
    );
  }
}
