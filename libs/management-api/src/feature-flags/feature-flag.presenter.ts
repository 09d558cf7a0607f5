import type { FeatureFlag } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentUserBasic, type UserBasicResponse } from '../users/user.presenter';
import { isSimpleFlag, normalizedFilters, simpleRolloutPercentage } from './feature-flag-filters.validator';

/** The spec's Feature flag, field for field. */
export interface FeatureFlagResponse {
  id: number;
  name: string;
  key: string;
  filters: Record<string, unknown>;
  deleted: boolean;
  active: boolean;
  created_by: UserBasicResponse | null;
  created_at: string;
  is_simple_flag: boolean;
  rollout_percentage: number | null;
  ensure_experience_continuity: boolean;
  experiment_set: number[];
  surveys: unknown[];
  features: unknown[];
  rollback_conditions: unknown;
  performed_rollback: boolean | null;
  can_edit: boolean;
  tags: string[];
  usage_dashboard: number | null;
  analytics_dashboards: number[];
  has_enriched_analytics: boolean;
}

/** The fields the activity log compares between before and after a change. */
export const TRACKED_FIELDS = [
  'name',
  'key',
  'filters',
  'deleted',
  'active',
  'ensure_experience_continuity',
  'rollback_conditions',
  'performed_rollback',
  'tags',
  'analytics_dashboards',
  'has_enriched_analytics',
] as const;

export function flagFilters(flag: FeatureFlag): Record<string, unknown> {
  return normalizedFilters(flag.filters, flag.rolloutPercentage);
}

export function presentFeatureFlag(flag: FeatureFlag, canEdit: boolean): FeatureFlagResponse {
  const filters = flagFilters(flag);
  return {
    id: flag.id,
    name: flag.name,
    key: flag.key,
    filters,
    deleted: flag.deleted,
    active: flag.active,
    created_by: flag.createdBy ? presentUserBasic(flag.createdBy) : null,
    created_at: iso(flag.createdAt),
    is_simple_flag: isSimpleFlag(filters),
    rollout_percentage: simpleRolloutPercentage(filters),
    ensure_experience_continuity: flag.ensureExperienceContinuity,
    // Experiments, surveys and early-access features are not part of this product: none link a flag.
    experiment_set: [],
    surveys: [],
    features: [],
    rollback_conditions: flag.rollbackConditions ?? null,
    performed_rollback: flag.performedRollback,
    can_edit: canEdit,
    tags: flag.tags,
    usage_dashboard: flag.usageDashboardId,
    analytics_dashboards: flag.analyticsDashboards,
    has_enriched_analytics: flag.hasEnrichedAnalytics,
  };
}

/** PostHog's MinimalFeatureFlagSerializer: what local evaluation and my_flags show of a flag. */
export interface MinimalFeatureFlag {
  id: number;
  team_id: number;
  name: string;
  key: string;
  filters: Record<string, unknown>;
  deleted: boolean;
  active: boolean;
  ensure_experience_continuity: boolean;
  version: number;
}

export function presentMinimalFlag(flag: FeatureFlag): MinimalFeatureFlag {
  return {
    id: flag.id,
    team_id: flag.teamId,
    name: flag.name,
    key: flag.key,
    filters: flagFilters(flag),
    deleted: flag.deleted,
    active: flag.active,
    ensure_experience_continuity: flag.ensureExperienceContinuity,
    version: flag.version,
  };
}
