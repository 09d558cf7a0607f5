import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  generateProjectApiToken,
  MembershipLevel,
  Organization,
  OrganizationMembership,
  PluginsAccessLevel,
  Team,
  User,
} from '@hogbase/postgres';
import { slugCandidates } from './slug.util';

export interface NewOrganization {
  name: string;
  isMemberJoinEmailEnabled?: boolean;
  enforce2fa?: boolean | null;
}

/**
 * Creating an organization is PostHog's `Organization.objects.bootstrap`: the organization, its
 * first project and an owner membership for the creator, in one transaction. The API and the
 * admin CLI both go through here.
 */
@Injectable()
export class OrganizationProvisioningService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async createOrganization(
    creator: User,
    input: NewOrganization,
    projectName = 'Default project',
  ): Promise<{ organization: Organization; team: Team }> {
    return this.dataSource.transaction(async (manager) => {
      const organization = manager.create(Organization, {
        id: uuidv7(),
        name: input.name,
        slug: await this.freeSlug(manager, input.name),
        isMemberJoinEmailEnabled: input.isMemberJoinEmailEnabled ?? true,
        enforce2fa: input.enforce2fa ?? null,
        // SECURITY: PostHog gives every new organization ROOT when self-hosted and CONFIG on its
        // cloud (organization_about_to_be_created, posthog/models/organization.py). Here any key
        // with organization:write creates organizations, and ROOT makes apps global (running in
        // every organization): INSTALL lets the organization's admins install and run their own
        // apps; ROOT comes only from the instance operator (admin CLI set-plugins-access-level).
        pluginsAccessLevel: PluginsAccessLevel.Install,
      });
      await manager.save(organization);
      await manager.insert(OrganizationMembership, {
        id: uuidv7(),
        organizationId: organization.id,
        userId: creator.id,
        level: MembershipLevel.Owner,
      });
      const team = await this.createProject(manager, organization.id, projectName);
      await manager.update(
        User,
        { id: creator.id },
        { currentOrganizationId: organization.id, currentTeamId: team.id },
      );
      creator.currentOrganizationId = organization.id;
      creator.currentTeamId = team.id;
      return { organization, team };
    });
  }

  async createProject(
    manager: EntityManager,
    organizationId: string,
    name: string,
    timezone = 'UTC',
  ): Promise<Team> {
    const team = manager.create(Team, {
      uuid: uuidv7(),
      organizationId,
      name,
      timezone,
      apiToken: generateProjectApiToken(),
    });
    return manager.save(team);
  }

  private async freeSlug(manager: EntityManager, name: string): Promise<string> {
    const candidates = slugCandidates(name);
    const taken = await manager
      .createQueryBuilder(Organization, 'organization')
      .select('organization.slug', 'slug')
      .where('organization.slug IN (:...candidates)', { candidates })
      .getRawMany<{ slug: string }>();
    const takenSlugs = new Set(taken.map((row) => row.slug));
    const slug = candidates.find((candidate) => !takenSlugs.has(candidate));
    if (!slug) throw new Error(`no free slug for organization name ${JSON.stringify(name)}`);
    return slug;
  }
}
