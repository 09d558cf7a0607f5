/** Flags as PostHog stores them (`posthog_featureflag.filters`), plain data built from rows or literals. */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type Properties = Readonly<Record<string, unknown>>;

/** `OperatorType` of PostHog's `rust/feature-flags/src/properties/property_models.rs`. */
export const FLAG_PROPERTY_OPERATORS = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'icontains_multi',
  'not_icontains_multi',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'not_between',
  'semver_eq',
  'semver_neq',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
  'semver_tilde',
  'semver_caret',
  'semver_wildcard',
  'is_set',
  'is_not_set',
  'is_date_exact',
  'is_date_after',
  'is_date_before',
  'in',
  'not_in',
  'flag_evaluates_to',
] as const;

export type FlagPropertyOperator = (typeof FLAG_PROPERTY_OPERATORS)[number];

export interface FlagProperty {
  key: string;
  /** Missing means `person`, as in PostHog. */
  type?: 'person' | 'group' | 'cohort' | 'flag' | null;
  /** Missing means `exact` (`in` for cohort filters). */
  operator?: string | null;
  value?: unknown;
  /** Only cohort definitions honour it; flag conditions ignore it, as PostHog does. */
  negation?: boolean | null;
  /** For `group` filters: the group type whose properties are read; defaults to the condition's. */
  group_type_index?: number | null;
  /** Written into local-evaluation payloads; ignored by this evaluator. */
  dependency_chain?: string[];
}

export interface FlagConditionGroup {
  properties?: FlagProperty[] | null;
  /** Missing or null means 100. */
  rollout_percentage?: number | null;
  variant?: string | null;
  /** Absent means the flag's aggregation; an explicit null means persons, even on a group flag. */
  aggregation_group_type_index?: number | null;
}

export interface FlagVariant {
  key: string;
  name?: string | null;
  rollout_percentage: number;
}

export interface FlagHoldout {
  id: number;
  exclusion_percentage: number;
}

export interface FlagFilters {
  groups?: FlagConditionGroup[] | null;
  multivariate?: { variants: FlagVariant[] } | null;
  /** Keyed by variant key, or `"true"` for a boolean flag. Values are usually JSON strings. */
  payloads?: Readonly<Record<string, unknown>> | null;
  aggregation_group_type_index?: number | null;
  /** Legacy early-access format: the first group is checked before the release conditions. */
  super_groups?: FlagConditionGroup[] | null;
  /** Current early-access format: reads the `$feature_enrollment/<flag key>` person property. */
  feature_enrollment?: boolean | null;
  holdout?: FlagHoldout | null;
}

export interface FlagDefinition {
  id: number;
  key: string;
  /** The flag's description (PostHog keeps the column name `name`). */
  name?: string | null;
  active: boolean;
  deleted: boolean;
  filters: FlagFilters;
  ensure_experience_continuity?: boolean | null;
  /** Missing is reported as version 0, as PostHog's flags service does. */
  version?: number | null;
  bucketing_identifier?: 'distinct_id' | 'device_id' | null;
  has_experiment?: boolean;
  team_id?: number;
}

export interface CohortPropertyGroup {
  /** `AND`, `OR`, or `property` (an AND); anything else fails the flag, as in PostHog. */
  type: string;
  values: Array<CohortPropertyGroup | FlagProperty>;
}

/** A static cohort's members live in the database: only `EvaluationContext.isInStaticCohort` knows them. */
export interface CohortDefinition {
  id: number;
  is_static?: boolean;
  properties?: CohortPropertyGroup | null;
  deleted?: boolean;
}

export interface EvaluationContext {
  distinctId: string;
  /** Stored merged with the request's (request wins); the evaluator adds `distinct_id` and `$initial_*`. */
  personProperties?: Properties;
  /** Group type name → group key. */
  groups?: Readonly<Record<string, string | number>>;
  /** Group type name → properties. */
  groupProperties?: Readonly<Record<string, Properties>>;
  /** Group type index (as a string or number key) → group type name. */
  groupTypeMapping?: Readonly<Record<string, string>>;
  /** Cohorts by id; a cohort filter naming a missing id fails the flag, as PostHog does. */
  cohorts?: Readonly<Record<string, CohortDefinition>>;
  isInStaticCohort?: (cohortId: number) => boolean;
  /** Experience continuity: flag key → the stored hash key; wins over every other identifier. */
  hashKeyOverrides?: Readonly<Record<string, string>>;
  /** Hashed by continuity flags with no stored override. */
  anonDistinctId?: string | null;
  deviceId?: string | null;
  /** IANA name, for date filters; UTC when missing. */
  timezone?: string;
  /** For relative dates such as `-7d`. */
  now?: Date;
}

/** `FeatureFlagMatchReason` of `rust/feature-flags/src/flags/flag_match_reason.rs`, and error codes. */
export type FlagReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'flag_disabled'
  | 'missing_dependency'
  | 'dependency_not_found_cohort'
  | 'dependency_cycle_cohort'
  | 'dependency_cycle_flag'
  | 'cohort_filters_parsing_error';

/** An entry of `/flags?v=2`'s `flags` map. */
export interface FlagEvaluationResult {
  key: string;
  enabled: boolean;
  variant: string | null;
  /** Present (true) only when the flag could not be evaluated. */
  failed?: true;
  reason: { code: FlagReasonCode; condition_index: number | null; description: string };
  metadata: {
    id: number;
    version: number;
    description: string | null;
    /** As stored for the returned value (usually a JSON string). */
    payload: unknown;
    has_experiment: boolean;
  };
}

/** As SDKs expose it: the variant key, else the boolean. */
export function flagValue(result: Pick<FlagEvaluationResult, 'enabled' | 'variant'>): string | boolean {
  return result.enabled && result.variant !== null ? result.variant : result.enabled;
}
