import type { DateMatchingOptions } from './date-matching.util';
import type {
  CohortDefinition,
  CohortPropertyGroup,
  EvaluationContext,
  FlagProperty,
  Properties,
} from './flag-definition.types';
import { FlagEvaluationError } from './flag-evaluation.error';
import { matchProperty } from './property-matching.util';

/**
 * Memoized for one request, as `rust/feature-flags/src/cohorts/cohort_operations.rs` (README).
 * TRICKY: inside an OR group a nested cohort filter ignores `negation`, a quirk of PostHog's, kept.
 */
export class CohortMatcher {
  private readonly memberships = new Map<number, boolean>();
  private readonly validated = new Set<number>();

  constructor(
    private readonly context: EvaluationContext,
    private readonly personProperties: Properties,
    private readonly dateOptions: DateMatchingOptions,
  ) {}

  matchesFilter(filter: FlagProperty): boolean {
    const inCohort = this.isMember(cohortIdOf(filter));
    return applyMembershipOperator(filter, inCohort);
  }

  isMember(cohortId: number): boolean {
    const known = this.memberships.get(cohortId);
    if (known !== undefined) return known;
    const cohort = this.cohort(cohortId);
    let member: boolean;
    if (cohort.is_static) {
      member = this.context.isInStaticCohort?.(cohortId) ?? false;
    } else {
      this.validateGraph(cohortId, new Set());
      member = cohort.properties ? this.matchesGroup(cohort.properties) : false;
    }
    this.memberships.set(cohortId, member);
    return member;
  }

  private cohort(cohortId: number): CohortDefinition {
    const cohorts = this.context.cohorts;
    const key = String(cohortId);
    const cohort = cohorts && Object.prototype.hasOwnProperty.call(cohorts, key) ? cohorts[key] : undefined;
    if (!cohort || cohort.deleted) throw FlagEvaluationError.cohortNotFound();
    return cohort;
  }

  /** As PostHog: the whole graph first, so a missing or cyclic dependency fails even a decided OR. */
  private validateGraph(cohortId: number, path: Set<number>): void {
    if (this.validated.has(cohortId)) return;
    if (path.has(cohortId)) throw FlagEvaluationError.cohortCycle();
    const cohort = this.cohort(cohortId);
    if (cohort.is_static || !cohort.properties) {
      this.validated.add(cohortId);
      return;
    }
    path.add(cohortId);
    for (const dependency of nestedCohortIds(cohort.properties)) this.validateGraph(dependency, path);
    path.delete(cohortId);
    this.validated.add(cohortId);
  }

  private matchesGroup(group: CohortPropertyGroup): boolean {
    const kind = group.type === 'property' ? 'AND' : group.type;
    if (kind !== 'AND' && kind !== 'OR') throw FlagEvaluationError.cohortFiltersParsing();
    for (const value of group.values ?? []) {
      const matched = isPropertyGroup(value) ? this.matchesGroup(value) : this.matchesLeaf(value, kind);
      if (kind === 'OR' && matched) return true;
      if (kind === 'AND' && !matched) return false;
    }
    return kind === 'AND';
  }

  private matchesLeaf(filter: FlagProperty, kind: 'AND' | 'OR'): boolean {
    const negated = filter.negation === true;
    if (filter.type === 'cohort') {
      const matched = this.matchesFilter(filter);
      return kind === 'OR' ? matched : matched !== negated;
    }
    const matched = matchProperty(filter, this.personProperties, this.dateOptions);
    return negated ? !matched : matched;
  }
}

/** `in` (the default) and `not_in`; any other operator on a cohort filter never matches. */
function applyMembershipOperator(filter: FlagProperty, inCohort: boolean): boolean {
  const operator = filter.operator ?? 'in';
  if (operator === 'in') return inCohort;
  if (operator === 'not_in') return !inCohort;
  return false;
}

export function cohortIdOf(filter: FlagProperty): number {
  const value = filter.value;
  const id = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isInteger(id)) throw FlagEvaluationError.cohortFiltersParsing();
  return id;
}

export function isPropertyGroup(value: CohortPropertyGroup | FlagProperty): value is CohortPropertyGroup {
  return Array.isArray((value as CohortPropertyGroup).values);
}

export function nestedCohortIds(group: CohortPropertyGroup): number[] {
  const ids: number[] = [];
  for (const value of group.values ?? []) {
    if (isPropertyGroup(value)) ids.push(...nestedCohortIds(value));
    else if (value.type === 'cohort') ids.push(cohortIdOf(value));
  }
  return ids;
}
