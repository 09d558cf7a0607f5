/**
 * The input model: a feature flag as PostHog stores it (`posthog_featureflag` with its `filters`
 * JSON), cohorts, and what one request knows about the person and groups being evaluated. Plain
 * data only, so the management API, capture and tests build it from rows or literals alike.
 */

/** A JSON value as stored in `filters` and in person and group properties. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Person, group and cohort properties: plain JSON objects. */
export type Properties = Readonly<Record<string, unknown>>;

/**
 * Operators PostHog's flag matching knows (`OperatorType` in the Rust flags service, kept in sync
 * with `FEATURE_FLAG_SUPPORTED_OPERATORS` in posthog/api/feature_flag.py). `in`/`not_in` apply to
 * cohort filters, `flag_evaluates_to` to flag dependencies.
 */
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

/** One property filter of a condition (`filters.groups[].properties[]`) or of a cohort. */
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
  /** Written into local-evaluation payloads for flag dependencies; ignored by this evaluator. */
  dependency_chain?: string[];
}

/** A release condition: its properties are ANDed, then the rollout applies. */
export interface FlagConditionGroup {
  properties?: FlagProperty[] | null;
  /** Missing or null means 100. */
  rollout_percentage?: number | null;
  /** A variant key that wins over the hashed variant when the condition matches. */
  variant?: string | null;
  /**
   * Per-condition aggregation (mixed targeting). Absent means the flag's; an explicit null means
   * person aggregation even on a group flag.
   */
  aggregation_group_type_index?: number | null;
}

export interface FlagVariant {
  key: string;
  name?: string | null;
  rollout_percentage: number;
}

/** An experiment holdout attached to the flag (`filters.holdout`). */
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

/** Property groups as cohorts store them: `{type: AND|OR, values: [group | property]}`. */
export interface CohortPropertyGroup {
  /** `AND`, `OR`, or `property` (an AND); anything else fails the flag, as in PostHog. */
  type: string;
  values: Array<CohortPropertyGroup | FlagProperty>;
}

/**
 * A cohort. Dynamic cohorts are evaluated from their properties; static cohorts (uploaded lists)
 * only through `EvaluationContext.isInStaticCohort`, since their members live in the database.
 */
export interface CohortDefinition {
  id: number;
  is_static?: boolean;
  properties?: CohortPropertyGroup | null;
  deleted?: boolean;
}

/** Everything one evaluation request knows, already loaded by the caller. */
export interface EvaluationContext {
  distinctId: string;
  /**
   * The person's stored properties merged with any the request sent (request wins). The evaluator
   * adds `distinct_id` and the missing `$initial_*` copies itself, as PostHog's flags service does.
   */
  personProperties?: Properties;
  /** Group type name → group key, as sent in `groups`. */
  groups?: Readonly<Record<string, string | number>>;
  /** Group type name → that group's properties. */
  groupProperties?: Readonly<Record<string, Properties>>;
  /** Group type index (as a string or number key) → group type name. */
  groupTypeMapping?: Readonly<Record<string, string>>;
  /** Cohorts by id; a cohort filter naming a missing id fails the flag, as PostHog does. */
  cohorts?: Readonly<Record<string, CohortDefinition>>;
  /** Whether the person is a member of the static cohort with this id. */
  isInStaticCohort?: (cohortId: number) => boolean;
  /**
   * Experience continuity: flag key → the stored hash key override (the anonymous distinct id
   * recorded when the person was identified). Wins over every other identifier for that flag.
   */
  hashKeyOverrides?: Readonly<Record<string, string>>;
  /** The request's `$anon_distinct_id`: the identifier of continuity flags with no stored override. */
  anonDistinctId?: string | null;
  /** The request's `$device_id`, for flags bucketed by device. */
  deviceId?: string | null;
  /** The project's timezone (IANA name) for date filters; UTC when missing. */
  timezone?: string;
  /** The clock for relative dates such as `-7d`; the current time when missing. */
  now?: Date;
}

/** PostHog's evaluation reason codes (`FeatureFlagMatchReason` and error codes). */
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

/** One flag's answer, in the shape of an entry of `/flags?v=2`'s `flags` map. */
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
    /** The stored payload for the returned value, as stored (usually a JSON string). */
    payload: unknown;
    has_experiment: boolean;
  };
}

/** The flag's value the way SDKs expose it: the variant key, else the boolean. */
export function flagValue(result: Pick<FlagEvaluationResult, 'enabled' | 'variant'>): string | boolean {
  return result.enabled && result.variant !== null ? result.variant : result.enabled;
}
