import { ApiProperty } from '@nestjs/swagger';
import type { FeatureFlag } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import {
  ANY_JSON,
  ApiModel,
  DATE_TIME,
  FREE_FORM_ARRAY,
  FREE_FORM_OBJECT,
} from '../schema/api-responses.decorator';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';
import { isSimpleFlag, normalizedFilters, simpleRolloutPercentage } from './feature-flag-filters.validator';

/** The spec's Feature flag, field for field. */
@ApiModel('FeatureFlag')
export class FeatureFlagResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ description: "The flag's description" })
  name!: string;

  @ApiProperty()
  key!: string;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description: '{groups, multivariate, payloads, aggregation_group_type_index}: the release conditions',
  })
  filters!: Record<string, unknown>;

  @ApiProperty()
  deleted!: boolean;

  @ApiProperty()
  active!: boolean;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  created_by!: UserBasicResponse | null;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty({ description: 'One condition on no properties: a plain rollout' })
  is_simple_flag!: boolean;

  @ApiProperty({ type: Number, nullable: true, description: "A simple flag's rollout, else null" })
  rollout_percentage!: number | null;

  @ApiProperty()
  ensure_experience_continuity!: boolean;

  @ApiProperty({ type: 'integer', isArray: true, description: 'Always empty: no experiments here' })
  experiment_set!: number[];

  @ApiProperty({ ...FREE_FORM_ARRAY, description: 'Always empty: no surveys here' })
  surveys!: unknown[];

  @ApiProperty({ ...FREE_FORM_ARRAY, description: 'Always empty: no early-access features here' })
  features!: unknown[];

  @ApiProperty({ ...ANY_JSON, description: 'Stored as given' })
  rollback_conditions!: unknown;

  @ApiProperty({ type: Boolean, nullable: true })
  performed_rollback!: boolean | null;

  @ApiProperty({ description: 'Whether the caller may change it' })
  can_edit!: boolean;

  @ApiProperty({ type: [String] })
  tags!: string[];

  @ApiProperty({ type: 'integer', nullable: true, description: 'The id of its usage dashboard' })
  usage_dashboard!: number | null;

  @ApiProperty({ type: 'integer', isArray: true })
  analytics_dashboards!: number[];

  @ApiProperty()
  has_enriched_analytics!: boolean;
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
@ApiModel('MinimalFeatureFlag')
export class MinimalFeatureFlag {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  team_id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  key!: string;

  @ApiProperty(FREE_FORM_OBJECT)
  filters!: Record<string, unknown>;

  @ApiProperty()
  deleted!: boolean;

  @ApiProperty()
  active!: boolean;

  @ApiProperty()
  ensure_experience_continuity!: boolean;

  @ApiProperty({ type: 'integer' })
  version!: number;
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
