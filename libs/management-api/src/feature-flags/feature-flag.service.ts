import { Injectable } from '@nestjs/common';
import type { Cohort, FeatureFlag, User } from '@hogbase/postgres';
import { ActivityLogService, changesBetween } from '../activity/activity-log.service';
import type { ResolvedProject } from '../auth/access.decorator';
import { CohortRepository } from '../cohorts/cohort.repository';
import { ApiError, notFound, permissionDenied } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { isUniqueViolation } from '../persistence/unique-violation.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { checkFeatureFlagFilters } from './feature-flag-filters.validator';
import {
  CreateFeatureFlagDto,
  FLAG_KEY_MESSAGE,
  FLAG_KEY_PATTERN,
  UpdateFeatureFlagDto,
} from './feature-flag.dto';
import { presentFeatureFlag, TRACKED_FIELDS, type FeatureFlagResponse } from './feature-flag.presenter';
import { FeatureFlagRepository, type FlagListFilters } from './feature-flag.repository';
import { FlagPermissionsService, type FlagEditRights } from './flag-permissions.service';
import { UsageDashboardService } from './usage-dashboard.service';

export const FEATURE_FLAG_SCOPE = 'FeatureFlag';
const NO_EDIT_PERMISSION = "You don't have edit permissions for this feature flag.";

function duplicateKey(): ApiError {
  return new ApiError('unique', 'There is already a feature flag with this key.', 'key');
}

function checkKey(key: string): void {
  if (!FLAG_KEY_PATTERN.test(key)) throw new ApiError('invalid_key', FLAG_KEY_MESSAGE, 'key');
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when cohort filters (or a cohort they include) filter on events: flags cannot use those. */
function hasBehavioralFilter(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasBehavioralFilter);
  if (!isRecord(value)) return false;
  if (value.type === 'behavioral' || value.type === 'event' || 'event_id' in value || 'action_id' in value) {
    return true;
  }
  return Object.values(value).some(hasBehavioralFilter);
}

/** Feature flags of a project: the rules of PostHog's FeatureFlagViewSet (`posthog/api/feature_flag.py`). */
@Injectable()
export class FeatureFlagService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly flags: FeatureFlagRepository,
    private readonly cohorts: CohortRepository,
    private readonly permissions: FlagPermissionsService,
    private readonly activity: ActivityLogService,
    private readonly dashboards: UsageDashboardService,
  ) {}

  async list(
    user: User,
    project: ResolvedProject,
    page: PageRequest,
    filters: FlagListFilters,
  ): Promise<{ count: number; results: FeatureFlagResponse[] }> {
    const [flags, count] = await this.flags.listLive(project.team.id, filters, page);
    const rights = await this.permissions.rightsOf(user, project);
    const canEdit = await this.permissions.canEditAll(rights, flags);
    return { count, results: flags.map((flag) => presentFeatureFlag(flag, canEdit.get(flag.id) ?? false)) };
  }

  /** The project's live flags, newest first (my_flags). */
  liveFlags(project: ResolvedProject): Promise<FeatureFlag[]> {
    return this.flags.findLive(project.team.id);
  }

  /** A flag of the project, deleted or not; 404 for an id of another project. */
  async find(project: ResolvedProject, id: number): Promise<FeatureFlag> {
    const flag = await this.flags.findInProject(project.team.id, id);
    if (!flag) throw notFound();
    return flag;
  }

  async retrieve(user: User, project: ResolvedProject, id: number): Promise<FeatureFlagResponse> {
    const flag = await this.find(project, id);
    return this.present(user, project, flag);
  }

  private async present(
    user: User,
    project: ResolvedProject,
    flag: FeatureFlag,
  ): Promise<FeatureFlagResponse> {
    const rights = await this.permissions.rightsOf(user, project);
    return presentFeatureFlag(flag, await this.permissions.canEdit(rights, flag));
  }

  async create(
    user: User,
    project: ResolvedProject,
    dto: CreateFeatureFlagDto,
  ): Promise<FeatureFlagResponse> {
    checkKey(dto.key);
    const filters = await this.checkFilters(project, dto.filters ?? {});
    const flag = await this.inTransaction(async () => {
      await this.flags.removeDeletedWithKey(project.team.id, dto.key);
      const created = await this.flags.insert({
        teamId: project.team.id,
        key: dto.key,
        name: dto.name ?? '',
        filters,
        deleted: dto.deleted ?? false,
        active: dto.active ?? true,
        ensureExperienceContinuity: dto.ensure_experience_continuity ?? false,
        rollbackConditions: dto.rollback_conditions ?? null,
        performedRollback: dto.performed_rollback ?? null,
        tags: dto.tags ?? [],
        analyticsDashboards: [...new Set(dto.analytics_dashboards ?? [])],
        hasEnrichedAnalytics: dto.has_enriched_analytics ?? false,
        createdById: user.id,
        ...(dto.created_at ? { createdAt: new Date(dto.created_at) } : {}),
      });
      created.createdBy = user;
      await this.dashboards.create(created);
      await this.activity.record({
        organizationId: project.organization.id,
        teamId: project.team.id,
        user,
        scope: FEATURE_FLAG_SCOPE,
        itemId: String(created.id),
        activity: 'created',
        name: created.key,
        changes: null,
      });
      return created;
    });
    return this.present(user, project, flag);
  }

  async update(
    user: User,
    project: ResolvedProject,
    id: number,
    dto: UpdateFeatureFlagDto,
  ): Promise<FeatureFlagResponse> {
    const rights = await this.permissions.rightsOf(user, project);
    const flag = await this.inTransaction(async () => {
      const current = await this.find(project, id);
      await this.requireEdit(rights, current);
      const before = presentFeatureFlag(current, true) as unknown as Record<string, unknown>;
      if (dto.key !== undefined && dto.key !== current.key) {
        checkKey(dto.key);
        await this.flags.removeDeletedWithKey(project.team.id, dto.key);
        current.filters = renameEnrollment(current.filters, current.key, dto.key);
        current.key = dto.key;
      }
      // PostHog keeps the stored conditions when a PATCH sends filters without `groups`.
      if (dto.filters !== undefined && 'groups' in dto.filters) {
        current.filters = await this.checkFilters(project, dto.filters);
      }
      if (dto.name !== undefined) current.name = dto.name;
      if (dto.deleted !== undefined) current.deleted = dto.deleted;
      if (dto.active !== undefined) {
        current.active = dto.active;
        if (dto.active) current.performedRollback = false;
      }
      if (dto.ensure_experience_continuity !== undefined) {
        current.ensureExperienceContinuity = dto.ensure_experience_continuity ?? false;
      }
      if (dto.rollback_conditions !== undefined) current.rollbackConditions = dto.rollback_conditions;
      if (dto.performed_rollback !== undefined) current.performedRollback = dto.performed_rollback;
      if (dto.tags !== undefined) current.tags = dto.tags;
      // Dashboards are only ever added to a flag, as PostHog does.
      if (dto.analytics_dashboards !== undefined) {
        current.analyticsDashboards = [
          ...new Set([...current.analyticsDashboards, ...dto.analytics_dashboards]),
        ];
      }
      if (dto.has_enriched_analytics !== undefined)
        current.hasEnrichedAnalytics = dto.has_enriched_analytics ?? false;
      if (dto.created_at !== undefined) current.createdAt = new Date(dto.created_at);
      const after = presentFeatureFlag(current, true) as unknown as Record<string, unknown>;
      const changes = changesBetween(FEATURE_FLAG_SCOPE, before, after, TRACKED_FIELDS);
      if (changes.length === 0) return current;
      current.version += 1;
      await this.flags.save(current);
      await this.activity.record({
        organizationId: project.organization.id,
        teamId: project.team.id,
        user,
        scope: FEATURE_FLAG_SCOPE,
        itemId: String(current.id),
        activity: 'updated',
        name: current.key,
        changes,
      });
      return current;
    });
    return presentFeatureFlag(flag, await this.permissions.canEdit(rights, flag));
  }

  /** 403 unless the caller may edit the flag. */
  async requireEdit(rights: FlagEditRights, flag: FeatureFlag): Promise<void> {
    if (!(await this.permissions.canEdit(rights, flag))) {
      throw permissionDenied(NO_EDIT_PERMISSION);
    }
  }

  /** Checks filters and that the cohorts they name exist in the project and target persons only. */
  private async checkFilters(project: ResolvedProject, input: unknown): Promise<Record<string, unknown>> {
    const { filters, cohortIds } = checkFeatureFlagFilters(input);
    if (cohortIds.length === 0) return filters;
    const cohorts = await this.cohorts.findLive(project.team.id, cohortIds);
    const byId = new Map(cohorts.map((cohort) => [cohort.id, cohort]));
    for (const id of cohortIds) {
      const cohort = byId.get(id);
      if (!cohort)
        throw new ApiError('cohort_does_not_exist', `Cohort with id ${id} does not exist`, 'filters');
      if (await this.isBehavioral(project, cohort, new Set())) {
        throw new ApiError(
          'behavioral_cohort_found',
          `Cohort '${cohort.name}' with filters on events cannot be used in feature flags.`,
          'filters',
        );
      }
    }
    return filters;
  }

  /** A cohort filtering on events, directly or through a cohort it includes. */
  private async isBehavioral(project: ResolvedProject, cohort: Cohort, seen: Set<number>): Promise<boolean> {
    if (seen.has(cohort.id)) return false;
    seen.add(cohort.id);
    if (cohort.isStatic) return false;
    if (hasBehavioralFilter(cohort.filters)) return true;
    for (const nested of nestedCohortIds(cohort.filters)) {
      const included = await this.cohorts.findOneLive(project.team.id, nested);
      if (included && (await this.isBehavioral(project, included, seen))) return true;
    }
    return false;
  }

  /** Runs `work` in a transaction; the live-key index turns a duplicate key into PostHog's 400. */
  private async inTransaction<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.unitOfWork.run(work);
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateKey();
      throw error;
    }
  }
}

function nestedCohortIds(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(nestedCohortIds);
  if (!isRecord(value)) return [];
  const own =
    value.type === 'cohort' && (typeof value.value === 'number' || typeof value.value === 'string')
      ? [Number(value.value)].filter(Number.isSafeInteger)
      : [];
  return [...own, ...Object.values(value).flatMap(nestedCohortIds)];
}

/** A renamed flag's early-access enrollment property follows its key. */
function renameEnrollment(
  filters: Record<string, unknown>,
  from: string,
  to: string,
): Record<string, unknown> {
  if (!Array.isArray(filters.super_groups)) return filters;
  const text = JSON.stringify(filters.super_groups).replaceAll(
    JSON.stringify(`$feature_enrollment/${from}`),
    JSON.stringify(`$feature_enrollment/${to}`),
  );
  return { ...filters, super_groups: JSON.parse(text) as unknown };
}
