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

/** PostHog's `Organization.objects.bootstrap` (posthog/models/organization.py), in one transaction. */
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
        // SECURITY: not PostHog's self-hosted ROOT (posthog/models/organization.py): any key with
        // organization:write creates organizations, and ROOT makes apps global. ROOT comes only
        // from the instance operator.
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

  /** Runs in the caller's unit of work. */
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
