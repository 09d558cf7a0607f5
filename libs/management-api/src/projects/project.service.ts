import { Injectable } from '@nestjs/common';
import { generateProjectApiToken, MembershipLevel, type Team } from '@hogbase/postgres';
import type { AccessContext, ResolvedOrganization, ResolvedProject } from '../auth/access.decorator';
import { AccessRepository } from '../auth/access.repository';
import { OrganizationAccessService } from '../auth/organization-access.service';
import { notFound } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { MembershipRepository } from '../members/membership.repository';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { UserRepository } from '../users/user.repository';
import type { CreateProjectDto, ProjectSdkSettingsDto, UpdateProjectDto } from './project.dto';
import { presentProject, ProjectResponse } from './project.presenter';
import { ProjectRepository } from './project.repository';

@Injectable()
export class ProjectService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly projects: ProjectRepository,
    private readonly memberships: MembershipRepository,
    private readonly users: UserRepository,
    private readonly access: AccessRepository,
    private readonly organizationAccess: OrganizationAccessService,
  ) {}

  /** Projects of every organization the caller belongs to, within the key's scoped organizations and projects. */
  async list(
    caller: AccessContext,
    page: PageRequest,
    organizationId?: string,
  ): Promise<{ count: number; results: ProjectResponse[] }> {
    const { count, results } = await this.projects.listForMember(
      {
        userId: caller.user.id,
        organizationId,
        scopedOrganizations: caller.apiKey.scopedOrganizations,
        scopedTeams: caller.apiKey.scopedTeams,
      },
      page,
    );
    return { count, results: results.map(({ team, level }) => presentProject(team, level)) };
  }

  /** `POST /api/projects/` creates in the caller's current organization, as PostHog does. */
  async createInCurrentOrganization(caller: AccessContext, dto: CreateProjectDto): Promise<ProjectResponse> {
    const organizationId = caller.user.currentOrganizationId;
    const membership = organizationId
      ? await this.memberships.findOfUser(organizationId, caller.user.id)
      : null;
    if (!membership) throw notFound('Organization not found.');
    const organization = await this.access.getOrganization(membership.organizationId);
    return this.create(caller, { organization, membership }, dto);
  }

  async create(
    caller: AccessContext,
    resolved: ResolvedOrganization,
    dto: CreateProjectDto,
  ): Promise<ProjectResponse> {
    // The guard checked a route naming the organization; `POST /api/projects/` names none.
    await this.organizationAccess.assertOrganizationAccess(
      caller.apiKey,
      resolved.organization,
      resolved.membership,
      MembershipLevel.Admin,
    );
    const team = await this.projects.insert({
      organizationId: resolved.organization.id,
      name: dto.name,
      timezone: dto.timezone ?? 'UTC',
      appUrls: dto.app_urls ?? [],
      anonymizeIps: dto.anonymize_ips ?? false,
      ...sdkSettings(dto),
      isDemo: dto.is_demo ?? false,
      completedSnippetOnboarding: dto.completed_snippet_onboarding ?? false,
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
    Object.assign(team, sdkSettings(dto));
    if (dto.completed_snippet_onboarding !== undefined) {
      team.completedSnippetOnboarding = dto.completed_snippet_onboarding;
    }
    await this.projects.save(team);
    return presentProject(team, membership.level);
  }

  /** A new project API key; capture hears the change (hogbase_project_changed) and refuses the old one. */
  async resetToken({ team, membership }: ResolvedProject): Promise<ProjectResponse> {
    team.apiToken = generateProjectApiToken();
    await this.projects.save(team);
    return presentProject(team, membership.level);
  }

  /** Users whose current project it was move to the first project of their current organization. */
  async remove({ team }: ResolvedProject): Promise<void> {
    await this.unitOfWork.run(async () => {
      const affected = await this.users.idsWithCurrentProject(team.id);
      await this.projects.delete(team.id);
      await this.users.resetCurrentProject(affected);
    });
  }
}

/** The SDK settings the request gives; an omitted one is absent, so the project keeps its value. */
function sdkSettings(dto: ProjectSdkSettingsDto): Partial<Team> {
  const settings: Partial<Team> = {};
  if (dto.inject_web_apps !== undefined) settings.injectWebApps = dto.inject_web_apps;
  if (dto.autocapture_opt_out !== undefined) settings.autocaptureOptOut = dto.autocapture_opt_out;
  if (dto.autocapture_exceptions_opt_in !== undefined) {
    settings.autocaptureExceptionsOptIn = dto.autocapture_exceptions_opt_in;
  }
  if (dto.autocapture_web_vitals_opt_in !== undefined) {
    settings.autocaptureWebVitalsOptIn = dto.autocapture_web_vitals_opt_in;
  }
  if (dto.autocapture_web_vitals_allowed_metrics !== undefined) {
    settings.autocaptureWebVitalsAllowedMetrics = dto.autocapture_web_vitals_allowed_metrics;
  }
  if (dto.capture_performance_opt_in !== undefined) {
    settings.capturePerformanceOptIn = dto.capture_performance_opt_in;
  }
  if (dto.capture_console_log_opt_in !== undefined) {
    settings.captureConsoleLogOptIn = dto.capture_console_log_opt_in;
  }
  if (dto.capture_dead_clicks !== undefined) settings.captureDeadClicks = dto.capture_dead_clicks;
  if (dto.heatmaps_opt_in !== undefined) settings.heatmapsOptIn = dto.heatmaps_opt_in;
  return settings;
}
