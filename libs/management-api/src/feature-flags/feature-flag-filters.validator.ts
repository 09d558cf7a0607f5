import { flagRegexProblem } from '@hogbase/flag-evaluation';
import { ApiError, type ErrorCode } from '../common/api.error';

/**
 * Checked as PostHog's serializer checks them (posthog/api/feature_flag.py), each failure a 400 on
 * `filters`. Cohort existence needs the database: the ids found are returned for the caller to check.
 */
export interface CheckedFilters {
  filters: Record<string, unknown>;
  cohortIds: number[];
}

const STRING_VALUE_OPERATORS = new Set([
  'regex',
  'icontains',
  'not_regex',
  'not_icontains',
  'gte',
  'lte',
  'gt',
  'lt',
]);
const DATE_OPERATORS = new Set(['is_date_before', 'is_date_after', 'is_date_exact']);
const MAX_LIST_VALUES = 1_000;
const ROLLOUT_TOTAL = 100;

function invalid(detail: string, code: ErrorCode = 'invalid_input'): ApiError {
  return new ApiError(code, detail, 'filters');
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkRollout(value: unknown, where: string): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
    throw invalid(`Filters are not valid (${where} rollout_percentage must be a number from 0 to 100)`);
  }
}

/** A relative date (`-7d`) or anything Date.parse reads: what PostHog's date parser accepts. */
function isDateValue(value: unknown): boolean {
  if (typeof value !== 'string' || value.trim() === '') return false;
  if (/^-?\d+[hdwmy]$/i.test(value.trim())) return true;
  return !Number.isNaN(Date.parse(value));
}

function checkProperty(property: unknown, aggregationIndex: number | null, cohortIds: number[]): void {
  if (!isRecord(property)) throw invalid('Filters are not valid (a property must be an object)');
  const type = property.type ?? 'person';
  if (aggregationIndex === null) {
    if (type !== 'person' && type !== 'cohort') {
      throw invalid('Filters are not valid (can only use person and cohort properties)');
    }
  } else if (type !== 'group' || property.group_type_index !== aggregationIndex) {
    throw invalid('Filters are not valid (can only use group properties)');
  }
  if (typeof property.key !== 'string' || property.key === '') {
    throw invalid('Filters are not valid (a property needs a key)');
  }
  const operator = property.operator ?? 'exact';
  const { value } = property;
  if (type === 'cohort') {
    const id = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
    if (!Number.isSafeInteger(id)) {
      throw new ApiError(
        'cohort_does_not_exist',
        `Cohort with id ${String(value)} does not exist`,
        'filters',
      );
    }
    cohortIds.push(id);
    return;
  }
  if (typeof operator !== 'string') throw invalid('Filters are not valid (an operator must be a string)');
  if (DATE_OPERATORS.has(operator) && !isDateValue(value)) {
    throw new ApiError('invalid_date', `Invalid date value: ${String(value)}`, 'filters');
  }
  if (STRING_VALUE_OPERATORS.has(operator) && typeof value !== 'string') {
    throw new ApiError(
      'invalid_value',
      `Invalid value for operator ${operator}: ${JSON.stringify(value)}`,
      'filters',
    );
  }
  // Flags evaluate regexes with RE2 (linear time, whatever the text an SDK sends). PostHog's
  // serializer has no such check: its engine also takes backreferences and lookaround. A pattern RE2
  // refuses would never match here, and saying so now beats a flag that never fires.
  if ((operator === 'regex' || operator === 'not_regex') && typeof value === 'string') {
    const problem = flagRegexProblem(value);
    if (problem !== undefined) {
      throw new ApiError(
        'invalid_value',
        `Invalid value for operator ${operator}: ${value} is not a regular expression flags can evaluate: ${problem}`,
        'filters',
      );
    }
  }
  if (Array.isArray(value) && value.length > MAX_LIST_VALUES) {
    throw invalid(
      `Property group expressions of type ${property.key} cannot contain more than ${MAX_LIST_VALUES} values.`,
    );
  }
}

function checkGroups(
  groups: unknown,
  name: string,
  aggregationIndex: number | null,
  variantKeys: Set<string>,
  cohortIds: number[],
): void {
  if (groups === undefined || groups === null) return;
  if (!Array.isArray(groups)) throw invalid(`Filters are not valid (${name} must be a list)`);
  for (const group of groups) {
    if (!isRecord(group)) throw invalid(`Filters are not valid (each of ${name} must be an object)`);
    checkRollout(group.rollout_percentage, 'a condition');
    const properties = group.properties ?? [];
    if (!Array.isArray(properties)) throw invalid('Filters are not valid (properties must be a list)');
    for (const property of properties) checkProperty(property, aggregationIndex, cohortIds);
    if (group.variant !== undefined && group.variant !== null) {
      if (typeof group.variant !== 'string' || !variantKeys.has(group.variant)) {
        throw invalid('Filters are not valid (variant override does not exist)');
      }
    }
  }
}

function variantsOf(filters: Record<string, unknown>): { key: string; rollout: number }[] {
  const { multivariate } = filters;
  if (multivariate === undefined || multivariate === null) return [];
  if (!isRecord(multivariate) || !Array.isArray(multivariate.variants)) {
    throw invalid('Filters are not valid (multivariate must hold a list of variants)');
  }
  const seen = new Set<string>();
  return multivariate.variants.map((variant) => {
    if (!isRecord(variant) || typeof variant.key !== 'string' || variant.key === '') {
      throw invalid('Filters are not valid (each variant needs a key)');
    }
    if (seen.has(variant.key))
      throw invalid(`Filters are not valid (variant ${variant.key} is defined twice)`);
    seen.add(variant.key);
    checkRollout(variant.rollout_percentage, 'a variant');
    return {
      key: variant.key,
      rollout: typeof variant.rollout_percentage === 'number' ? variant.rollout_percentage : 0,
    };
  });
}

function checkPayloads(payloads: unknown, variantKeys: Set<string>): void {
  if (payloads === undefined || payloads === null) return;
  if (!isRecord(payloads)) throw invalid('Payloads must be passed as a dictionary');
  const keys = Object.keys(payloads);
  if (variantKeys.size > 0) {
    if (keys.some((key) => !variantKeys.has(key))) {
      throw invalid('Payload keys must match a variant key for multivariate flags');
    }
  } else if (keys.length > 1 || (keys.length === 1 && keys[0] !== 'true')) {
    throw invalid("Payload keys must be 'true' for boolean flags");
  }
  for (const value of Object.values(payloads)) {
    if (typeof value !== 'string') continue;
    try {
      JSON.parse(value);
    } catch {
      throw invalid('Payload value is not valid JSON');
    }
  }
}

/** Checks `filters` (an object; `{}` is a flag on for everyone). */
export function checkFeatureFlagFilters(input: unknown): CheckedFilters {
  if (!isRecord(input)) throw invalid('Filters are not valid (filters must be an object)');
  const filters = input;
  const index = filters.aggregation_group_type_index;
  if (
    index !== undefined &&
    index !== null &&
    !(Number.isInteger(index) && (index as number) >= 0 && (index as number) <= 4)
  ) {
    throw invalid('Filters are not valid (aggregation_group_type_index must be 0 to 4 or null)');
  }
  const aggregationIndex = typeof index === 'number' ? index : null;
  const variants = variantsOf(filters);
  const variantKeys = new Set(variants.map((variant) => variant.key));
  if (variants.length > 0) {
    const total = variants.reduce((sum, variant) => sum + variant.rollout, 0);
    if (Math.abs(total - ROLLOUT_TOTAL) > 1e-9) {
      throw invalid('Invalid variant definitions: Variant rollout percentages must sum to 100.');
    }
  }
  const cohortIds: number[] = [];
  checkGroups(filters.groups, 'groups', aggregationIndex, variantKeys, cohortIds);
  // Super conditions (early access enrollment) target persons whatever the aggregation.
  checkGroups(filters.super_groups, 'super_groups', null, variantKeys, cohortIds);
  checkGroups(filters.holdout_groups, 'holdout_groups', aggregationIndex, variantKeys, cohortIds);
  checkPayloads(filters.payloads, variantKeys);
  return { filters, cohortIds: [...new Set(cohortIds)] };
}

/** PostHog's is_simple_flag: one condition, no properties, not group-based. */
export function isSimpleFlag(filters: Record<string, unknown>): boolean {
  const groups = Array.isArray(filters.groups) ? filters.groups : [];
  return (
    groups.length === 1 &&
    groups.every(
      (group) => !isRecord(group) || !Array.isArray(group.properties) || group.properties.length === 0,
    ) &&
    (filters.aggregation_group_type_index === undefined || filters.aggregation_group_type_index === null)
  );
}

/** The response's rollout_percentage: the single condition's, for a simple flag. */
export function simpleRolloutPercentage(filters: Record<string, unknown>): number | null {
  if (!isSimpleFlag(filters)) return null;
  const [group] = filters.groups as Record<string, unknown>[];
  return typeof group?.rollout_percentage === 'number' ? group.rollout_percentage : null;
}

/** Legacy rows without `groups`: PostHog's get_filters() reads them as one condition. */
export function normalizedFilters(
  filters: Record<string, unknown>,
  legacyRollout: number | null,
): Record<string, unknown> {
  if ('groups' in filters) return filters;
  return {
    ...filters,
    groups: [
      {
        properties: Array.isArray(filters.properties) ? filters.properties : [],
        rollout_percentage: legacyRollout,
      },
    ],
  };
}
