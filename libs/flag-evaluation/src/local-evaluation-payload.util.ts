import { nestedCohortIds } from './cohort-matching.util';
import type {
  CohortDefinition,
  CohortPropertyGroup,
  FlagConditionGroup,
  FlagDefinition,
  FlagFilters,
  FlagProperty,
} from './flag-definition.types';
import { flagDependencyIds } from './compiled-flags.util';

/** One flag as `local_evaluation` / `/flags/definitions` serve it (MinimalFeatureFlagSerializer). */
export interface LocalEvaluationFlag {
  id: number;
  team_id?: number;
  name: string;
  key: string;
  filters: FlagFilters;
  deleted: boolean;
  active: boolean;
  ensure_experience_continuity: boolean;
  version: number;
  has_experiment: boolean;
  bucketing_identifier?: 'distinct_id' | 'device_id';
}

/** The `send_cohorts` form, the only one posthog-node asks for. */
export interface LocalEvaluationPayload {
  flags: LocalEvaluationFlag[];
  group_type_mapping: Record<string, string>;
  /** Dynamic cohorts the flags reference, also through other cohorts. */
  cohorts: Record<string, CohortPropertyGroup>;
}

export interface LocalEvaluationInput {
  flags: readonly FlagDefinition[];
  groupTypeMapping: Readonly<Record<string, string>>;
  cohorts?: readonly CohortDefinition[];
}

/**
 * As `posthog/models/feature_flag/local_evaluation.py` builds it: inactive flags too, static cohorts
 * left out (SDKs ask the server for those flags), flag dependencies by key with a `dependency_chain`.
 */
export function buildLocalEvaluationPayload(input: LocalEvaluationInput): LocalEvaluationPayload {
  const flags = input.flags.filter((flag) => !flag.deleted);
  const byId = new Map(flags.map((flag) => [flag.id, flag]));
  const cohortsById = new Map(
    (input.cohorts ?? []).filter((cohort) => !cohort.deleted).map((c) => [c.id, c]),
  );

  const cohorts: Record<string, CohortPropertyGroup> = {};
  const addCohort = (cohortId: number): void => {
    const cohort = cohortsById.get(cohortId);
    if (!cohort || cohort.is_static || !cohort.properties || String(cohortId) in cohorts) return;
    cohorts[String(cohortId)] = cohort.properties;
    for (const nested of safeNestedCohortIds(cohort.properties)) addCohort(nested);
  };

  const payloadFlags = flags.map((flag): LocalEvaluationFlag => {
    for (const condition of flag.filters.groups ?? []) {
      for (const filter of condition.properties ?? []) {
        if (filter.type === 'cohort' && Number.isInteger(Number(filter.value)))
          addCohort(Number(filter.value));
      }
    }
    return {
      id: flag.id,
      ...(flag.team_id === undefined ? {} : { team_id: flag.team_id }),
      name: flag.name ?? '',
      key: flag.key,
      filters: withDependencyChains(flag, byId),
      deleted: flag.deleted,
      active: flag.active,
      ensure_experience_continuity: flag.ensure_experience_continuity ?? false,
      version: flag.version ?? 0,
      has_experiment: flag.has_experiment ?? false,
      ...(flag.bucketing_identifier ? { bucketing_identifier: flag.bucketing_identifier } : {}),
    };
  });

  return {
    flags: payloadFlags,
    group_type_mapping: Object.fromEntries(
      Object.entries(input.groupTypeMapping).map(([index, name]) => [String(index), name]),
    ),
    cohorts,
  };
}

function safeNestedCohortIds(group: CohortPropertyGroup): number[] {
  try {
    return nestedCohortIds(group);
  } catch {
    return [];
  }
}

function withDependencyChains(flag: FlagDefinition, byId: ReadonlyMap<number, FlagDefinition>): FlagFilters {
  if (flagDependencyIds(flag).length === 0) return flag.filters;
  const groups = (flag.filters.groups ?? []).map((condition): FlagConditionGroup => ({
    ...condition,
    properties: condition.properties?.map((filter) =>
      filter.type === 'flag' ? rewriteDependency(filter, byId) : filter,
    ),
  }));
  return { ...flag.filters, groups };
}

function rewriteDependency(filter: FlagProperty, byId: ReadonlyMap<number, FlagDefinition>): FlagProperty {
  const dependency = byId.get(Number(filter.key));
  if (!dependency) return { ...filter, dependency_chain: [filter.key] };
  const chain = dependencyChain(dependency, byId);
  return { ...filter, key: dependency.key, dependency_chain: chain ?? [] };
}

/** The keys to evaluate before and including `flag`, dependencies first; undefined on a cycle. */
function dependencyChain(
  flag: FlagDefinition,
  byId: ReadonlyMap<number, FlagDefinition>,
): string[] | undefined {
  const chain: string[] = [];
  const done = new Set<number>();
  const visiting = new Set<number>();
  const visit = (current: FlagDefinition): boolean => {
    if (done.has(current.id)) return true;
    if (visiting.has(current.id)) return false;
    visiting.add(current.id);
    for (const dependencyId of flagDependencyIds(current)) {
      const dependency = byId.get(dependencyId);
      if (dependency && !visit(dependency)) return false;
    }
    visiting.delete(current.id);
    done.add(current.id);
    chain.push(current.key);
    return true;
  };
  return visit(flag) ? chain : undefined;
}
