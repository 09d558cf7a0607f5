import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import type { CohortPropertyGroup, FlagFilters } from '@hogbase/flag-evaluation';
import { ApiModel, DATE_TIME, FREE_FORM_ARRAY, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';
import { MinimalFeatureFlag } from './feature-flag.presenter';

/** A flag's value: true/false, or the key of the variant a multivariate flag gives. */
const FLAG_VALUE: ApiPropertyOptions = {
  oneOf: [{ type: 'boolean' }, { type: 'string' }],
  description: 'true or false, or the variant key of a multivariate flag',
};

/** One flag as `local_evaluation` serves it (@hogbase/flag-evaluation's LocalEvaluationFlag). */
@ApiModel('LocalEvaluationFeatureFlag')
export class LocalEvaluationFlagResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiPropertyOptional({ type: 'integer' })
  team_id?: number;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  key!: string;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description: 'The release conditions; a flag dependency names its flag by key, with `dependency_chain`',
  })
  filters!: FlagFilters;

  @ApiProperty()
  deleted!: boolean;

  @ApiProperty()
  active!: boolean;

  @ApiProperty()
  ensure_experience_continuity!: boolean;

  @ApiProperty({ type: 'integer' })
  version!: number;

  @ApiProperty()
  has_experiment!: boolean;

  @ApiPropertyOptional({ enum: ['distinct_id', 'device_id'] })
  bucketing_identifier?: 'distinct_id' | 'device_id';
}

/** What SDKs poll for local evaluation. */
@ApiModel('FeatureFlagLocalEvaluation')
export class LocalEvaluationResponse {
  @ApiProperty({ type: () => LocalEvaluationFlagResponse, isArray: true })
  flags!: LocalEvaluationFlagResponse[];

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Group type index (as text) → group type name',
  })
  group_type_mapping!: Record<string, string>;

  @ApiProperty({
    type: 'object',
    additionalProperties: FREE_FORM_OBJECT,
    description: 'Cohort id → its property group (dynamic cohorts the flags use; with ?send_cohorts only)',
  })
  cohorts!: Record<string, CohortPropertyGroup>;
}

@ApiModel('FeatureFlagEvaluation')
export class FlagEvaluationResponse {
  @ApiProperty({ description: 'condition_match, no_condition_match, out_of_rollout_bound, disabled…' })
  reason!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The condition that decided, if one did' })
  condition_index!: number | null;
}

/** A flag's value for the subject and why: one entry of `evaluation_reasons`. */
@ApiModel('FeatureFlagEvaluationReason')
export class FlagEvaluationReasonResponse {
  @ApiProperty(FLAG_VALUE)
  value!: string | boolean;

  @ApiProperty({ type: () => FlagEvaluationResponse })
  evaluation!: FlagEvaluationResponse;
}

/** `evaluation_reasons`: flag key → value and reason. */
export type EvaluationReasonsResponse = Record<string, FlagEvaluationReasonResponse>;

@ApiModel('MyFlag')
export class MyFlagResponse {
  @ApiProperty({ type: () => MinimalFeatureFlag })
  feature_flag!: MinimalFeatureFlag;

  @ApiProperty(FLAG_VALUE)
  value!: string | boolean;
}

/** The body of `user_blast_radius` (checked by the handler, PostHog's messages). */
@ApiModel('UserBlastRadiusRequest')
export class UserBlastRadiusRequest {
  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description: 'One release condition: {properties, rollout_percentage}',
  })
  condition!: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 4,
    nullable: true,
    description: 'Count groups of this type instead of persons',
  })
  group_type_index?: number | null;
}

@ApiModel('UserBlastRadius')
export class UserBlastRadiusResponse {
  @ApiProperty({ type: 'integer', minimum: 0 })
  users_affected!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  total_users!: number;
}

@ApiModel('CohortCreatedBy')
export class CohortCreatorResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ format: 'uuid' })
  uuid!: string;

  @ApiProperty()
  email!: string;

  @ApiProperty()
  first_name!: string;
}

/** The static cohort `create_static_cohort_for_flag` makes (PostHog's Cohort, the fields it answers). */
@ApiModel('Cohort')
export class CohortResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  description!: string;

  @ApiProperty(FREE_FORM_ARRAY)
  groups!: unknown[];

  @ApiProperty(FREE_FORM_OBJECT)
  filters!: Record<string, unknown>;

  @ApiProperty()
  deleted!: boolean;

  @ApiProperty()
  is_calculating!: boolean;

  @ApiProperty()
  is_static!: boolean;

  @ApiProperty({ type: 'integer', nullable: true })
  count!: number | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  last_calculation!: string | null;

  @ApiProperty({ type: () => CohortCreatorResponse })
  created_by!: CohortCreatorResponse;

  @ApiProperty(DATE_TIME)
  created_at!: string;
}

@ApiModel('FeatureFlagStaticCohort')
export class StaticCohortResponse {
  @ApiProperty({ type: () => CohortResponse })
  cohort!: CohortResponse;
}

/** What `dashboard/` and `enrich_usage_dashboard/` answer: 200 on success, 400 with the error. */
@ApiModel('FeatureFlagDashboardOutcome')
export class DashboardOutcomeResponse {
  @ApiProperty()
  success!: boolean;

  @ApiPropertyOptional({ description: 'Why it failed (with success false)' })
  error?: string;
}
