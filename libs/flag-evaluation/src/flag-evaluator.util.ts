import { CohortMatcher } from './cohort-matching.util';
import type { DateMatchingOptions } from './date-matching.util';
import type {
  EvaluationContext,
  FlagConditionGroup,
  FlagDefinition,
  FlagEvaluationResult,
  FlagProperty,
  Properties,
} from './flag-definition.types';
import { FlagEvaluationError } from './flag-evaluation.error';
import { calculateHash, flagHash, isInRollout, variantForHash } from './flag-hash.util';
import { formatJsonNumber } from './json-repr.util';
import { hasProperty, matchProperty } from './property-matching.util';
import { CompiledFlags, ownValue, sharedReason } from './compiled-flags.util';
import { disabledResult, failedResult, missingDependencyResult, type MatchReason } from './flag-result.util';
import { withInitialProperties } from './person-properties.util';

// `get_match` of `rust/feature-flags/src/flags/flag_matching.rs`, step by step.

/** `FeatureFlagMatchReason::score`: the higher reason wins among non-matches. */
const REASON_SCORE: Record<MatchReason, number> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_condition_match_groups_not_evaluated: 2,
  no_group_type: 1,
};

interface FlagMatch {
  matches: boolean;
  variant: string | null;
  reason: MatchReason;
  conditionIndex: number | null;
  payloadKey: string | null;
}

export interface EvaluateFlagsOptions {
  /** Only these keys (and what they depend on). */
  flagKeys?: readonly string[];
  /** Also answer inactive flags, with `flag_disabled`; `/flags` leaves them out. */
  includeInactive?: boolean;
}

/** A missing dependency makes a flag `missing_dependency`; a cycle fails every flag in it. */
export function evaluateFlags(
  flags: readonly FlagDefinition[] | CompiledFlags,
  context: EvaluationContext,
  options: EvaluateFlagsOptions = {},
): Record<string, FlagEvaluationResult> {
  const compiled = flags instanceof CompiledFlags ? flags : new CompiledFlags(flags);
  const request = new EvaluationRequest(context, compiled);
  const { live, byId } = compiled;
  const wanted = options.flagKeys ? new Set(options.flagKeys) : undefined;
  const results: Record<string, FlagEvaluationResult> = {};
  const state = new Map<number, 'visiting' | 'done' | 'missing' | 'cycle'>();

  const visit = (flag: FlagDefinition): 'done' | 'missing' | 'cycle' => {
    const seen = state.get(flag.id);
    if (seen === 'visiting') return 'cycle';
    if (seen !== undefined) return seen;
    state.set(flag.id, 'visiting');
    if (!flag.active) {
      // PostHog never evaluates an inactive flag, so what it depends on does not matter.
      state.set(flag.id, 'done');
      if (options.includeInactive) results[flag.key] = disabledResult(flag);
      return 'done';
    }
    let outcome: 'done' | 'missing' | 'cycle' = 'done';
    for (const dependencyId of compiled.dependencyIds(flag)) {
      const dependency = byId.get(dependencyId);
      const dependencyOutcome = dependency ? visit(dependency) : 'missing';
      if (dependencyOutcome === 'cycle') outcome = 'cycle';
      else if (dependencyOutcome === 'missing' && outcome === 'done') outcome = 'missing';
    }
    state.set(flag.id, outcome);
    if (outcome === 'cycle') results[flag.key] = failedResult(flag, FlagEvaluationError.flagCycle());
    else if (outcome === 'missing') results[flag.key] = missingDependencyResult(flag);
    else results[flag.key] = request.evaluate(flag);
    return outcome;
  };

  for (const flag of live) {
    if (wanted && !wanted.has(flag.key)) continue;
    visit(flag);
  }
  if (!wanted) return results;
  return Object.fromEntries(Object.entries(results).filter(([key]) => wanted.has(key)));
}

/** `allFlags` resolves its dependencies, else they are `missing_dependency`. Inactive: `flag_disabled`. */
export function evaluateFlag(
  flag: FlagDefinition,
  context: EvaluationContext,
  allFlags: readonly FlagDefinition[] = [flag],
): FlagEvaluationResult {
  const flags = allFlags.some((candidate) => candidate.id === flag.id) ? allFlags : [...allFlags, flag];
  const result = evaluateFlags(flags, context, { flagKeys: [flag.key], includeInactive: true })[flag.key];
  return result ?? disabledResult(flag);
}

class EvaluationRequest {
  readonly personProperties: Properties;
  readonly dateOptions: DateMatchingOptions;
  readonly cohorts: CohortMatcher;
  readonly flagValues = new Map<number, string | boolean>();

  constructor(
    readonly context: EvaluationContext,
    private readonly compiled: CompiledFlags,
  ) {
    // The flags service always knows the distinct id as a person property, and fills `$initial_*`
    // properties ingestion has not written yet from their current values.
    this.personProperties = withInitialProperties({
      distinct_id: context.distinctId,
      ...context.personProperties,
    });
    this.dateOptions = { timezone: context.timezone ?? 'UTC', now: context.now ?? new Date() };
    this.cohorts = new CohortMatcher(context, this.personProperties, this.dateOptions);
  }

  evaluate(flag: FlagDefinition): FlagEvaluationResult {
    try {
      const match = this.match(flag);
      this.flagValues.set(flag.id, match.matches ? (match.variant ?? true) : false);
      return {
        key: flag.key,
        enabled: match.matches,
        variant: match.variant,
        reason: sharedReason(match.reason, match.conditionIndex),
        metadata: this.compiled.metadata(flag, match.payloadKey),
      };
    } catch (error) {
      if (error instanceof FlagEvaluationError) return failedResult(flag, error);
      throw error;
    }
  }

  private match(flag: FlagDefinition): FlagMatch {
    const filters = flag.filters;
    let best: { reason: MatchReason; index: number | null } = { reason: 'no_group_type', index: null };
    const consider = (reason: MatchReason, index: number | null): void => {
      if (REASON_SCORE[best.reason] <= REASON_SCORE[reason]) best = { reason, index };
    };
    let skippedGroupConditions = false;

    // Early access enrollment is a person-level decision, even on a group flag.
    if (filters.feature_enrollment === true) {
      const enrollmentKey = `$feature_enrollment/${flag.key}`;
      if (hasProperty(this.personProperties, enrollmentKey)) {
        const value = this.personProperties[enrollmentKey];
        return superConditionMatch(value === true || value === 'true');
      }
    } else if (filters.super_groups?.[0]?.properties?.length) {
      const superCondition = filters.super_groups[0];
      const relevant = superCondition.properties!.some((filter) =>
        hasProperty(this.personProperties, filter.key),
      );
      if (relevant) return superConditionMatch(this.isConditionMatch(flag, superCondition, null).matches);
    }

    if (filters.holdout) {
      const holdout = filters.holdout;
      const percentage = Math.min(Math.max(holdout.exclusion_percentage, 0), 100);
      const identifier = this.hashedIdentifier(flag, flagAggregation(flag), false);
      const inHoldout = !(percentage < 100 && calculateHash('holdout-', identifier) > percentage / 100);
      if (inHoldout) {
        const variant = `holdout-${holdout.id}`;
        return {
          matches: true,
          variant,
          reason: 'holdout_condition_value',
          conditionIndex: null,
          payloadKey: variant ?? 'true',
        };
      }
    }

    const conditions = filters.groups ?? [];
    for (let index = 0; index < conditions.length; index++) {
      const condition = conditions[index];
      const aggregation = conditionAggregation(flag, condition);
      if (aggregation === null) {
        // Device bucketing without a device id cannot place the person; PostHog counts it as out.
        if (flag.bucketing_identifier === 'device_id' && !this.context.deviceId) {
          consider('out_of_rollout_bound', index);
          continue;
        }
      } else if (this.groupKey(aggregation) === undefined) {
        skippedGroupConditions = true;
        consider('no_group_type', index);
        continue;
      }

      const { matches, reason } = this.isConditionMatch(flag, condition, aggregation);
      consider(reason, index);
      if (matches) {
        const override = condition.variant;
        const variants = filters.multivariate?.variants ?? [];
        const variant =
          override && variants.some((candidate) => candidate.key === override)
            ? override
            : variants.length === 0
              ? null
              : variantForHash(this.hash(flag, 'variant', aggregation), variants);
        return {
          matches: true,
          variant,
          reason: best.reason,
          conditionIndex: best.index,
          payloadKey: variant ?? 'true',
        };
      }
    }

    if (best.reason === 'no_condition_match' && skippedGroupConditions) {
      best = { ...best, reason: 'no_condition_match_groups_not_evaluated' };
    }
    return {
      matches: false,
      variant: null,
      reason: best.reason,
      conditionIndex: best.index,
      payloadKey: null,
    };
  }

  private isConditionMatch(
    flag: FlagDefinition,
    condition: FlagConditionGroup,
    aggregation: number | null,
  ): { matches: boolean; reason: MatchReason } {
    const rollout = condition.rollout_percentage ?? 100;
    const properties = condition.properties ?? [];
    // Cohorts cost the most, so PostHog checks them last, and only if everything else matched.
    const cohortFilters: FlagProperty[] = [];
    for (const filter of properties) {
      if (filter.type === 'flag') {
        if (!this.matchesFlagDependency(filter)) return { matches: false, reason: 'no_condition_match' };
      } else if (filter.type === 'cohort') {
        cohortFilters.push(filter);
      } else if (!matchProperty(filter, this.propertiesFor(filter, aggregation), this.dateOptions)) {
        return { matches: false, reason: 'no_condition_match' };
      }
    }
    if (cohortFilters.length > 0) {
      // Every referenced cohort is resolved before any verdict, so a missing one fails the flag.
      const memberships = cohortFilters.map((filter) => this.cohorts.matchesFilter(filter));
      if (memberships.includes(false)) return { matches: false, reason: 'no_condition_match' };
    }
    if (rollout === 100) return { matches: true, reason: 'condition_match' };
    return isInRollout(this.hash(flag, '', aggregation), rollout)
      ? { matches: true, reason: 'condition_match' }
      : { matches: false, reason: 'out_of_rollout_bound' };
  }

  private propertiesFor(filter: FlagProperty, aggregation: number | null): Properties {
    if (filter.type === 'group') {
      const index = filter.group_type_index ?? aggregation;
      return index === null ? {} : this.groupProperties(index);
    }
    return this.personProperties;
  }

  private groupProperties(index: number): Properties {
    const typeName = ownValue(this.context.groupTypeMapping, String(index));
    return (typeName === undefined ? undefined : ownValue(this.context.groupProperties, typeName)) ?? {};
  }

  private groupKey(index: number): string | undefined {
    const typeName = ownValue(this.context.groupTypeMapping, String(index));
    if (typeName === undefined) return undefined;
    const key: unknown = ownValue(this.context.groups, typeName);
    if (typeof key === 'string') return key === '' ? undefined : key;
    if (typeof key === 'number') return formatJsonNumber(key);
    return undefined;
  }

  private matchesFlagDependency(filter: FlagProperty): boolean {
    if (filter.operator !== 'flag_evaluates_to') return false;
    const value = this.flagValues.get(Number(filter.key));
    if (value === undefined) return false;
    if (filter.value === true) return value !== false;
    if (filter.value === false) return value === false;
    if (typeof filter.value === 'string') return value === filter.value;
    return false;
  }

  private hash(flag: FlagDefinition, salt: string, aggregation: number | null): number {
    return flagHash(flag.key, this.hashedIdentifier(flag, aggregation, true), salt);
  }

  private hashedIdentifier(
    flag: FlagDefinition,
    aggregation: number | null,
    useStoredOverrides: boolean,
  ): string {
    if (aggregation !== null) return this.groupKey(aggregation) ?? '';
    const context = this.context;
    if (flag.bucketing_identifier === 'device_id' && context.deviceId) return context.deviceId;
    const stored = useStoredOverrides ? ownValue(context.hashKeyOverrides, flag.key) : undefined;
    if (stored !== undefined) return stored;
    if (flag.ensure_experience_continuity && context.anonDistinctId != null) return context.anonDistinctId;
    return context.distinctId;
  }
}

function flagAggregation(flag: FlagDefinition): number | null {
  return flag.filters.aggregation_group_type_index ?? null;
}

/** A condition's own aggregation when it has the key (null meaning person), else the flag's. */
function conditionAggregation(flag: FlagDefinition, condition: FlagConditionGroup): number | null {
  if (Object.prototype.hasOwnProperty.call(condition, 'aggregation_group_type_index')) {
    return condition.aggregation_group_type_index ?? null;
  }
  return flagAggregation(flag);
}

/** PostHog attaches the `"true"` payload to an early-access answer whether it is true or not. */
function superConditionMatch(matches: boolean): FlagMatch {
  return {
    matches,
    variant: null,
    reason: 'super_condition_value',
    conditionIndex: 0,
    payloadKey: 'true',
  };
}
