import { Injectable } from '@nestjs/common';
import {
  MembershipLevel,
  type Organization,
  PluginsAccessLevel,
  type Team,
  type User,
} from '@hogbase/postgres';
import { MembershipRepository } from '../members/membership.repository';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import { UserRepository } from '../users/user.repository';
import { OrganizationRepository } from './organization.repository';
import { slugCandidates } from './slug.util';

export interface NewOrganization {
  name: string;
  isMemberJoinEmailEnabled?: boolean;
  enforce2fa?: boolean | null;
}

/**
 * Creating an organization is PostHog's `Organization.objects.bootstrap`
 * (posthog/models/organization.py): the organization, its first project and an owner membership
 * for the creator, in one transaction. The API and the admin CLI both go through here.
 */
@Injectable()
export class OrganizationProvisioningService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly organizations: OrganizationRepository,
    private readonly memberships: MembershipRepository,
    private readonly projects: ProjectRepository,
    private readonly users: UserRepository,
  ) {}

  createOrganization(
    creator: User,
    input: NewOrganization,
    projectName = 'Default project',
  ): Promise<{ organization: Organization; team: Team }> {
    return this.unitOfWork.run(async () => {
      const organization = await this.organizations.insert({
        name: input.name,
        slug: await this.freeSlug(input.name),
        isMemberJoinEmailEnabled: input.isMemberJoinEmailEnabled ?? true,
        enforce2fa: input.enforce2fa ?? null,
        // SECURITY: PostHog gives every new organization ROOT when self-hosted and CONFIG on its
        // cloud (organization_about_to_be_created, posthog/models/organization.py). Here any key
        // with organization:write creates organizations, and ROOT makes apps global (running in
        // every organization): INSTALL lets the organization's admins install and run their own
        // apps; ROOT comes only from the instance operator (admin CLI set-plugins-access-level).
        pluginsAccessLevel: PluginsAccessLevel.Install,
      });
      await this.memberships.insert(organization.id, creator.id, MembershipLevel.Owner);
      const team = await this.provisionProject(organization.id, projectName);
      await this.users.setCurrentContext(creator.id, organization.id, team.id);
      creator.currentOrganizationId = organization.id;
      creator.currentTeamId = team.id;
      return { organization, team };
    });
  }

  /** A new project (with its own API token) in the organization, in the caller's unit of work. */
  provisionProject(organizationId: string, name: string, timezone = 'UTC'): Promise<Team> {
    return this.projects.insert({ organizationId, name, timezone });
  }

  private async freeSlug(name: string): Promise<string> {
    const candidates = slugCandidates(name);
    const taken = await this.organizations.takenSlugs(candidates);
    const slug = candidates.find((candidate) => !taken.has(candidate));
    if (!slug) throw new Error(`no free slug for organization name ${JSON.stringify(name)}`);
    return slug;
  }
}
