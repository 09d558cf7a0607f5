import type { FlagDefinition, FlagEvaluationResult, FlagReasonCode } from './flag-definition.types';
import type { FlagEvaluationError } from './flag-evaluation.error';

/** Reasons an evaluation can end with, before `no_condition_match` variants collapse to one code. */
export type MatchReason =
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'condition_match'
  | 'out_of_rollout_bound'
  | 'no_condition_match'
  | 'no_condition_match_groups_not_evaluated'
  | 'no_group_type';

/** `get_reason_description` of `rust/feature-flags/src/api/types.rs`. */
export const REASON_DESCRIPTIONS: Record<FlagReasonCode | MatchReason, string> = {
  condition_match: 'Matched condition set',
  no_condition_match: 'No matching condition set',
  no_condition_match_groups_not_evaluated:
    'No matching condition set (group conditions were not evaluated because no group type was provided)',
  out_of_rollout_bound: 'Out of rollout bound',
  no_group_type: 'No group type',
  super_condition_value: 'Super condition value',
  holdout_condition_value: 'Holdout condition value',
  flag_disabled: 'Feature flag is disabled',
  missing_dependency: 'Flag cannot be evaluated due to missing dependency',
  dependency_not_found_cohort: 'Cohort dependency not found',
  dependency_cycle_cohort: 'Cohort dependency cycle detected',
  dependency_cycle_flag: 'Flag dependency cycle detected',
  cohort_filters_parsing_error: 'Failed to parse cohort filters',
};

export function metadataOf(flag: FlagDefinition, payload: unknown): FlagEvaluationResult['metadata'] {
  return {
    id: flag.id,
    version: flag.version ?? 0,
    description: null,
    payload,
    has_experiment: flag.has_experiment ?? false,
  };
}

export function failedResult(flag: FlagDefinition, error: FlagEvaluationError): FlagEvaluationResult {
  return {
    key: flag.key,
    enabled: false,
    variant: null,
    failed: true,
    reason: { code: error.code, condition_index: null, description: error.description },
    metadata: metadataOf(flag, null),
  };
}

export function missingDependencyResult(flag: FlagDefinition): FlagEvaluationResult {
  return nonMatchResult(flag, 'missing_dependency');
}

export function disabledResult(flag: FlagDefinition): FlagEvaluationResult {
  return nonMatchResult(flag, 'flag_disabled');
}

function nonMatchResult(
  flag: FlagDefinition,
  code: 'missing_dependency' | 'flag_disabled',
): FlagEvaluationResult {
  return {
    key: flag.key,
    enabled: false,
    variant: null,
    reason: { code, condition_index: null, description: REASON_DESCRIPTIONS[code] },
    metadata: metadataOf(flag, null),
  };
}
