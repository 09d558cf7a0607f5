import { parseDateString, parsePropertyDate, type DateMatchingOptions } from './date-matching.util';
import type { FlagProperty, Properties } from './flag-definition.types';
import { stringRepresentation, toFloat } from './json-repr.util';
import { regexFind } from './regex-matching.util';
import {
  canonicalizeVersion,
  compareVersions,
  normalizeVersion,
  parseVersionRequirement,
  requirementMatches,
  stripLeadingZeros,
  toSemver,
  versionsEqual,
} from './semver-matching.util';

/**
 * `match_property` of `rust/feature-flags/src/properties/property_matching.rs`: a missing property
 * matches only the negative operators.
 */
export function matchProperty(
  filter: FlagProperty,
  properties: Properties,
  options: DateMatchingOptions,
): boolean {
  const key = filter.key;
  const present = hasProperty(properties, key);
  const operator = filter.operator ?? 'exact';

  if (operator === 'is_set') return present;
  if (operator === 'is_not_set') return !present;

  // serde reads a JSON null filter value as no value, and every other operator needs one.
  const value = filter.value;
  if (value === null || value === undefined) return false;
  const actual = present ? properties[key] : undefined;

  switch (operator) {
    case 'exact':
      return present ? exactMatch(value, actual) : false;
    case 'is_not':
      return present ? !exactMatch(value, actual) : true;
    case 'icontains':
    case 'not_icontains': {
      if (!present) return operator === 'not_icontains';
      const contained = asciiLower(stringRepresentation(actual)).includes(
        asciiLower(stringRepresentation(value)),
      );
      return operator === 'icontains' ? contained : !contained;
    }
    case 'starts_with':
    case 'not_starts_with': {
      if (!present) return operator === 'not_starts_with';
      const prefixed = asciiLower(stringRepresentation(actual)).startsWith(
        asciiLower(stringRepresentation(value)),
      );
      return operator === 'starts_with' ? prefixed : !prefixed;
    }
    case 'ends_with':
    case 'not_ends_with': {
      if (!present) return operator === 'not_ends_with';
      const suffixed = asciiLower(stringRepresentation(actual)).endsWith(
        asciiLower(stringRepresentation(value)),
      );
      return operator === 'ends_with' ? suffixed : !suffixed;
    }
    case 'icontains_multi':
    case 'not_icontains_multi': {
      if (!present) return operator === 'not_icontains_multi';
      const haystack = asciiLower(stringRepresentation(actual));
      const needles = Array.isArray(value) ? value : [value];
      const contained = needles.some((needle) => haystack.includes(asciiLower(stringRepresentation(needle))));
      return operator === 'icontains_multi' ? contained : !contained;
    }
    case 'regex':
    case 'not_regex': {
      if (!present) return operator === 'not_regex';
      const matched = regexFind(stringRepresentation(value), stringRepresentation(actual));
      // A pattern RE2 refuses, or a property too long to search, matches neither way.
      if (matched === undefined) return false;
      return operator === 'regex' ? matched : !matched;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return present ? compareNumbers(operator, actual, value) : false;
    case 'between':
    case 'not_between':
      return present ? matchBetween(operator, actual, value) : operator === 'not_between';
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return present ? compareSemver(operator, actual, value) : false;
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard':
      return present ? matchSemverRange(operator, actual, value) : false;
    case 'is_date_exact':
    case 'is_date_after':
    case 'is_date_before':
      return matchDate(operator, present ? actual : undefined, value, options);
    default:
      // `in`/`not_in` belong to cohort filters, `flag_evaluates_to` to flag dependencies; PostHog
      // refuses an unknown operator when it loads the flag, so no person matches it either.
      return false;
  }
}

/** A property exists when its key is present, even with a null value (JSON has no undefined). */
export function hasProperty(properties: Properties, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(properties, key) && properties[key] !== undefined;
}

function exactMatch(value: unknown, actual: unknown): boolean {
  if (isTruthyOrFalsy(value)) return isTruthy(value) === isTruthy(actual);
  if (Array.isArray(value)) {
    const target = stringRepresentation(actual).toLowerCase();
    return value.some((item) => stringRepresentation(item).toLowerCase() === target);
  }
  return stringRepresentation(value).toLowerCase() === stringRepresentation(actual).toLowerCase();
}

/**
 * A boolean, `"true"`/`"false"` in any case, or a list of only those (an empty list included).
 * TRICKY: so `exact false` also matches any value that is not truthy, like `"no"` or `null`.
 */
function isTruthyOrFalsy(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    return lower === 'true' || lower === 'false';
  }
  if (Array.isArray(value)) return value.every(isTruthyOrFalsy);
  return false;
}

function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.toLowerCase() === 'true';
  if (Array.isArray(value)) return value.every(isTruthy);
  return false;
}

/** Rust's `to_ascii_lowercase`: only A-Z change, so `İ` or `Σ` stay as they are. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

function compareNumbers(operator: 'gt' | 'gte' | 'lt' | 'lte', actual: unknown, value: unknown): boolean {
  const left = toFloat(actual);
  const right = toFloat(value);
  if (left === undefined || right === undefined) return false;
  switch (operator) {
    case 'gt':
      return left > right;
    case 'gte':
      return left >= right;
    case 'lt':
      return left < right;
    case 'lte':
      return left <= right;
  }
}

/** Inclusive on both ends, like HogQL; the filter value must be `[min, max]` with min <= max. */
function matchBetween(operator: 'between' | 'not_between', actual: unknown, value: unknown): boolean {
  if (!Array.isArray(value) || value.length !== 2) return false;
  const low = toFloat(value[0]);
  const high = toFloat(value[1]);
  if (low === undefined || high === undefined || Number.isNaN(low) || Number.isNaN(high) || low > high)
    return false;
  const parsed = toFloat(actual);
  if (parsed === undefined || Number.isNaN(parsed)) return false;
  const inRange = parsed >= low && parsed <= high;
  return operator === 'between' ? inRange : !inRange;
}

function compareSemver(
  operator: 'semver_eq' | 'semver_neq' | 'semver_gt' | 'semver_gte' | 'semver_lt' | 'semver_lte',
  actual: unknown,
  value: unknown,
): boolean {
  const left = toSemver(stringRepresentation(actual));
  const right = toSemver(stringRepresentation(value));
  if (left === undefined || right === undefined) return false;
  switch (operator) {
    case 'semver_eq':
      return versionsEqual(left, right);
    case 'semver_neq':
      return !versionsEqual(left, right);
    case 'semver_gt':
      return compareVersions(left, right) > 0;
    case 'semver_gte':
      return compareVersions(left, right) >= 0;
    case 'semver_lt':
      return compareVersions(left, right) < 0;
    case 'semver_lte':
      return compareVersions(left, right) <= 0;
  }
}

function matchSemverRange(
  operator: 'semver_tilde' | 'semver_caret' | 'semver_wildcard',
  actual: unknown,
  value: unknown,
): boolean {
  const version = toSemver(stringRepresentation(actual));
  if (version === undefined) return false;
  const filter = normalizeVersion(stringRepresentation(value));
  const requirement =
    operator === 'semver_tilde'
      ? `~${canonicalizeVersion(filter)}`
      : operator === 'semver_caret'
        ? `^${canonicalizeVersion(filter)}`
        : filter.split('.').map(stripLeadingZeros).join('.').replaceAll('*', 'x');
  const comparators = parseVersionRequirement(requirement);
  return comparators !== undefined && requirementMatches(comparators, version);
}

function matchDate(
  operator: 'is_date_exact' | 'is_date_after' | 'is_date_before',
  actual: unknown,
  value: unknown,
  options: DateMatchingOptions,
): boolean {
  const actualDate = parsePropertyDate(actual, options);
  if (actualDate === undefined || typeof value !== 'string') return false;
  const filterDate = parseDateString(value, options);
  if (filterDate === undefined) return false;
  if (operator === 'is_date_before') return actualDate < filterDate;
  if (operator === 'is_date_after') return actualDate > filterDate;
  return actualDate === filterDate;
}
