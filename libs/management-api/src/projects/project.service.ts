import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  generateProjectApiToken,
  MembershipLevel,
  Organization,
  OrganizationMembership,
  Team,
  User,
} from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization, ResolvedProject } from '../auth/access-context';
import { assertOrganizationAccess } from '../auth/organization-access.util';
import { notFound } from '../common/api-error';
import type { PageRequest } from '../common/pagination.util';
import { OrganizationProvisioningService } from '../organizations/organization-provisioning.service';
import type { CreateProjectDto, ProjectSdkSettingsDto, UpdateProjectDto } from './project.dto';
import { presentProject, ProjectResponse } from './project.presenter';

@Injectable()
export class ProjectService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly provisioning: OrganizationProvisioningService,
  ) {}

  /** Projects of every organization the caller belongs to, within the key's scoped organizations and projects. */
  async list(
    caller: AccessContext,
    page: PageRequest,
    organizationId?: string,
  ): Promise<{ count: number; results: ProjectResponse[] }> {
    const query = this.dataSource
      .getRepository(Team)
      .createQueryBuilder('team')
      .innerJoin(OrganizationMembership, 'membership', 'membership.organization_id = team.organization_id')
      .addSelect('membership.level', 'membership_level')
      .where('membership.user_id = :userId', { userId: caller.user.id });
    if (organizationId) query.andWhere('team.organization_id = :organizationId', { organizationId });
    if (caller.apiKey.scopedOrganizations?.length) {
      query.andWhere('team.organization_id IN (:...scopedOrganizations)', {
        scopedOrganizations: caller.apiKey.scopedOrganizations,
      });
    }
    if (caller.apiKey.scopedTeams?.length) {
      query.andWhere('team.id IN (:...scopedTeams)', { scopedTeams: caller.apiKey.scopedTeams });
    }
    const count = await query.getCount();
    const { entities, raw } = await query
      .orderBy('team.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getRawAndEntities<{ membership_level: MembershipLevel }>();
    return {
      count,
      results: entities.map((team, index) => presentProject(team, raw[index].membership_level)),
    };
  }

  /** `POST /api/projects/` creates in the caller's current organization, as PostHog does. */
  async createInCurrentOrganization(caller: AccessContext, dto: CreateProjectDto): Promise<ProjectResponse> {
    const organizationId = caller.user.currentOrganizationId;
    const membership = organizationId
      ? await this.dataSource
          .getRepository(OrganizationMembership)
          .findOneBy({ organizationId, userId: caller.user.id })
      : null;
    if (!membership) throw notFound('Organization not found.');
    const organization = await this.dataSource
      .getRepository(Organization)
      .findOneByOrFail({ id: membership.organizationId });
    return this.create(caller, { organization, membership }, dto);
  }

  async create(
    caller: AccessContext,
    resolved: ResolvedOrganization,
    dto: CreateProjectDto,
  ): Promise<ProjectResponse> {
    // The guard checked a route naming the organization; `POST /api/projects/` names none.
    await assertOrganizationAccess(
      this.dataSource.manager,
      caller.apiKey,
      resolved.organization,
      resolved.membership,
      MembershipLevel.Admin,
    );
    const team = await this.dataSource.transaction(async (manager) => {
      const created = await this.provisioning.createProject(
        manager,
        resolved.organization.id,
        dto.name,
        dto.timezone,
      );
      created.appUrls = dto.app_urls ?? [];
      created.anonymizeIps = dto.anonymize_ips ?? false;
      applySdkSettings(created, dto);
      created.isDemo = dto.is_demo ?? false;
      created.completedSnippetOnboarding = dto.completed_snippet_onboarding ?? false;
      return manager.save(created);
    });
    return presentProject(team, resolved.membership.level);
  }

  retrieve({ team, membership }: ResolvedProject): ProjectResponse {
    return presentProject(team, membership.level);
  }

  async update({ team, membership }: ResolvedProject, dto: UpdateProjectDto): Promise<ProjectResponse> {
    if (dto.name !== undefined) team.name = dto.name;
    if (dto.timezone !== undefined) team.timezone = dto.timezone;
    if (dto.app_urls !== undefined) team.appUrls = dto.app_urls;
    if (dto.anonymize_ips !== undefined) team.anonymizeIps = dto.anonymize_ips;
    applySdkSettings(team, dto);
    if (dto.completed_snippet_onboarding !== undefined) {
      team.completedSnippetOnboarding = dto.completed_snippet_onboarding;
    }
    await this.dataSource.getRepository(Team).save(team);
    return presentProject(team, membership.level);
  }

  /** A new project API key; capture hears the change (hogbase_project_changed) and refuses the old one. */
  async resetToken({ team, membership }: ResolvedProject): Promise<ProjectResponse> {
    team.apiToken = generateProjectApiToken();
    await this.dataSource.getRepository(Team).save(team);
    return presentProject(team, membership.level);
  }

  async remove({ team }: ResolvedProject): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const affected = await manager
        .getRepository(User)
        .find({ select: { id: true }, where: { currentTeamId: team.id } });
      await manager.getRepository(Team).delete({ id: team.id });
      // Users whose current project was this one move to the first project of their current organization.
      await manager.query(
        `UPDATE users SET current_team_id = (
           SELECT t.id FROM teams t WHERE t.organization_id = users.current_organization_id ORDER BY t.id LIMIT 1
         ) WHERE id = ANY($1::int[])`,
        [affected.map((user) => user.id)],
      );
    });
  }
}

/** Copies the SDK settings the request gives onto the project; an omitted one keeps its value. */
function applySdkSettings(team: Team, dto: ProjectSdkSettingsDto): void {
  if (dto.inject_web_apps !== undefined) team.injectWebApps = dto.inject_web_apps;
  if (dto.autocapture_opt_out !== undefined) team.autocaptureOptOut = dto.autocapture_opt_out;
  if (dto.autocapture_exceptions_opt_in !== undefined) {
    team.autocaptureExceptionsOptIn = dto.autocapture_exceptions_opt_in;
  }
  if (dto.autocapture_web_vitals_opt_in !== undefined) {
    team.autocaptureWebVitalsOptIn = dto.autocapture_web_vitals_opt_in;
  }
  if (dto.autocapture_web_vitals_allowed_metrics !== undefined) {
    team.autocaptureWebVitalsAllowedMetrics = dto.autocapture_web_vitals_allowed_metrics;
  }
  if (dto.capture_performance_opt_in !== undefined)
    team.capturePerformanceOptIn = dto.capture_performance_opt_in;
  if (dto.capture_console_log_opt_in !== undefined)
    team.captureConsoleLogOptIn = dto.capture_console_log_opt_in;
  if (dto.capture_dead_clicks !== undefined) team.captureDeadClicks = dto.capture_dead_clicks;
  if (dto.heatmaps_opt_in !== undefined) team.heatmapsOptIn = dto.heatmaps_opt_in;
}
