import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, QueryFailedError } from 'typeorm';
import { Cohort, FeatureFlag, type User } from '@hogbase/postgres';
import { ActivityLogService, changesBetween } from '../activity/activity-log.service';
import type { ResolvedProject } from '../auth/access-context';
import { ApiError, notFound, permissionDenied } from '../common/api-error';
import type { PageRequest } from '../common/pagination.util';
import { checkFeatureFlagFilters } from './feature-flag-filters.validator';
import {
  CreateFeatureFlagDto,
  FLAG_KEY_MESSAGE,
  FLAG_KEY_PATTERN,
  UpdateFeatureFlagDto,
} from './feature-flag.dto';
import { presentFeatureFlag, TRACKED_FIELDS, type FeatureFlagResponse } from './feature-flag.presenter';
import { FlagPermissionsService, type FlagEditRights } from './flag-permissions.service';
import { UsageDashboardService } from './usage-dashboard.service';

const UNIQUE_VIOLATION = '23505';
export const FEATURE_FLAG_SCOPE = 'FeatureFlag';
const NO_EDIT_PERMISSION = "You don't have edit permissions for this feature flag.";

export interface FlagListQuery {
  active?: boolean;
  search?: string;
  type?: 'boolean' | 'multivariant';
}

function duplicateKey(): ApiError {
  return new ApiError('unique', 'There is already a feature flag with this key.', 'key');
}

function checkKey(key: string): void {
  if (!FLAG_KEY_PATTERN.test(key)) throw new ApiError('invalid_key', FLAG_KEY_MESSAGE, 'key');
}

function isUniqueViolation(error: unknown): boolean {
  return (
    error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION
  );
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

/** Feature flags of a project: PostHog's FeatureFlagViewSet rules (reference §8). */
@Injectable()
export class FeatureFlagService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly permissions: FlagPermissionsService,
    private readonly activity: ActivityLogService,
    private readonly dashboards: UsageDashboardService,
  ) {}

  async list(
    user: User,
    project: ResolvedProject,
    page: PageRequest,
    query: FlagListQuery,
  ): Promise<{ count: number; results: FeatureFlagResponse[] }> {
    const builder = this.dataSource
      .getRepository(FeatureFlag)
      .createQueryBuilder('flag')
      .leftJoinAndSelect('flag.createdBy', 'createdBy')
      .where('flag.team_id = :teamId AND NOT flag.deleted', { teamId: project.team.id })
      .orderBy('flag.created_at', 'DESC')
      .addOrderBy('flag.id', 'DESC')
      .skip(page.offset)
      .take(page.limit);
    if (query.active !== undefined) builder.andWhere('flag.active = :active', { active: query.active });
    if (query.search) {
      builder.andWhere("(flag.key ILIKE :search ESCAPE '\\' OR flag.name ILIKE :search ESCAPE '\\')", {
        search: `%${query.search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`,
      });
    }
    if (query.type === 'multivariant') {
      builder.andWhere(
        "jsonb_array_length(COALESCE(flag.filters->'multivariate'->'variants', '[]'::jsonb)) > 0",
      );
    } else if (query.type === 'boolean') {
      builder.andWhere(
        "jsonb_array_length(COALESCE(flag.filters->'multivariate'->'variants', '[]'::jsonb)) = 0",
      );
    }
    const [flags, count] = await builder.getManyAndCount();
    const rights = await this.permissions.rightsOf(user, project);
    const canEdit = await this.permissions.canEditAll(rights, flags);
    return { count, results: flags.map((flag) => presentFeatureFlag(flag, canEdit.get(flag.id) ?? false)) };
  }

  /** The project's live flags, newest first (my_flags). */
  liveFlags(project: ResolvedProject): Promise<FeatureFlag[]> {
    return this.dataSource.getRepository(FeatureFlag).find({
      where: { teamId: project.team.id, deleted: false },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /** A flag of the project, deleted or not; 404 for an id of another project. Outside a transaction. */
  find(project: ResolvedProject, id: string): Promise<FeatureFlag> {
    return this.findIn(this.dataSource.manager, project, id);
  }

  private async findIn(manager: EntityManager, project: ResolvedProject, id: string): Promise<FeatureFlag> {
    const flag = /^\d{1,9}$/.test(id)
      ? await manager.getRepository(FeatureFlag).findOne({
          where: { id: Number(id), teamId: project.team.id },
          relations: { createdBy: true },
        })
      : null;
    if (!flag) throw notFound();
    return flag;
  }

  async retrieve(user: User, project: ResolvedProject, id: string): Promise<FeatureFlagResponse> {
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
    const filters = await this.checkFilters(this.dataSource.manager, project, dto.filters ?? {});
    const flag = await this.inTransaction(async (manager) => {
      // PostHog frees a soft-deleted flag's key for the new flag by removing the old row.
      await this.removeDeletedWithKey(manager, project, dto.key);
      const repository = manager.getRepository(FeatureFlag);
      const created = await repository.save(
        repository.create({
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
        }),
      );
      created.createdBy = user;
      await this.dashboards.create(manager, created);
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
    id: string,
    dto: UpdateFeatureFlagDto,
  ): Promise<FeatureFlagResponse> {
    const rights = await this.permissions.rightsOf(user, project);
    // NOTE: every read below goes through `manager`: a read on another connection while this
    // transaction is open deadlocks the embedded Postgres (and the guard refuses it).
    const flag = await this.inTransaction(async (manager) => {
      const current = await this.findIn(manager, project, id);
      await this.requireEdit(rights, current);
      const before = presentFeatureFlag(current, true) as unknown as Record<string, unknown>;
      if (dto.key !== undefined && dto.key !== current.key) {
        checkKey(dto.key);
        await this.removeDeletedWithKey(manager, project, dto.key);
        current.filters = renameEnrollment(current.filters, current.key, dto.key);
        current.key = dto.key;
      }
      // PostHog keeps the stored conditions when a PATCH sends filters without `groups`.
      if (dto.filters !== undefined && 'groups' in dto.filters) {
        current.filters = await this.checkFilters(manager, project, dto.filters);
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
      const { createdBy, ...columns } = current;
      await manager.getRepository(FeatureFlag).save(columns);
      current.createdBy = createdBy;
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
  private async checkFilters(
    manager: EntityManager,
    project: ResolvedProject,
    input: unknown,
  ): Promise<Record<string, unknown>> {
    const { filters, cohortIds } = checkFeatureFlagFilters(input);
    if (cohortIds.length === 0) return filters;
    const cohorts = await manager
      .getRepository(Cohort)
      .findBy({ id: In(cohortIds), teamId: project.team.id, deleted: false });
    const byId = new Map(cohorts.map((cohort) => [cohort.id, cohort]));
    for (const id of cohortIds) {
      const cohort = byId.get(id);
      if (!cohort)
        throw new ApiError('cohort_does_not_exist', `Cohort with id ${id} does not exist`, 'filters');
      if (await this.isBehavioral(manager, project, cohort, new Set())) {
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
  private async isBehavioral(
    manager: EntityManager,
    project: ResolvedProject,
    cohort: Cohort,
    seen: Set<number>,
  ): Promise<boolean> {
    if (seen.has(cohort.id)) return false;
    seen.add(cohort.id);
    if (cohort.isStatic) return false;
    if (hasBehavioralFilter(cohort.filters)) return true;
    for (const nested of nestedCohortIds(cohort.filters)) {
      const included = await manager
        .getRepository(Cohort)
        .findOneBy({ id: nested, teamId: project.team.id, deleted: false });
      if (included && (await this.isBehavioral(manager, project, included, seen))) return true;
    }
    return false;
  }

  private async removeDeletedWithKey(
    manager: EntityManager,
    project: ResolvedProject,
    key: string,
  ): Promise<void> {
    await manager.getRepository(FeatureFlag).delete({ teamId: project.team.id, key, deleted: true });
  }

  /** Runs `work` in a transaction; the live-key index turns a duplicate key into PostHog's 400. */
  private async inTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(work);
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
