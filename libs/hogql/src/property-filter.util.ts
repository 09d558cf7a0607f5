import {
  addMicros,
  formatClickHouseDateTime,
  ONE_DAY_MICROS,
  ONE_SECOND_MICROS,
  parseFilterDate,
  type DateValue,
} from './date-value.util';
import { HogQLCompiler } from './hogql-compiler.util';
import { HogQLError, quoteExpression } from './hogql.errors';
import { EVENT_FIELDS } from './hogql-fields.util';
import { likePatternError } from './hogql-comparisons.util';
import { MAX_REGEX_LENGTH, re2SyntaxError } from './re2-syntax.util';
import type { QueryParams } from './query-params.util';

/**
 * The listing's `properties` as `prop_filter_json_extract` of `posthog/models/property/util.py`
 * runs them, person properties read from the event (the README's table). Unsupported filter types
 * are a 400: dropping them silently would return events the filter meant to exclude.
 */
export interface PropertyFilterLimits {
  maxFilters: number;
  maxGroupDepth: number;
  maxValues: number;
  maxValueLength: number;
  maxKeyLength: number;
}

export const DEFAULT_PROPERTY_FILTER_LIMITS: Readonly<PropertyFilterLimits> = {
  maxFilters: 200,
  maxGroupDepth: 5,
  maxValues: 1_000,
  maxValueLength: 10_000,
  maxKeyLength: 1_000,
};

export interface PropertyFilterOptions {
  now?: Date;
  /** 1 where `properties` is plain JSON (`properties_plain`): `exact` then searches the text first. */
  plainPropertiesColumn?: string;
  compiler?: HogQLCompiler;
  limits?: Partial<PropertyFilterLimits>;
}

export const PROPERTY_FILTER_OPERATORS = [
  'exact',
  'is_not',
  'in',
  'not_in',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'min',
  'max',
  'between',
  'not_between',
  'is_set',
  'is_not_set',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
] as const;

export type PropertyFilterOperator = (typeof PROPERTY_FILTER_OPERATORS)[number];

/** What `negation: true` turns an operator into (PostHog's negate_operator, plus the ones it lacked). */
const NEGATED: Readonly<Record<PropertyFilterOperator, PropertyFilterOperator>> = {
  exact: 'is_not',
  is_not: 'exact',
  in: 'not_in',
  not_in: 'in',
  icontains: 'not_icontains',
  not_icontains: 'icontains',
  regex: 'not_regex',
  not_regex: 'regex',
  gt: 'lte',
  gte: 'lt',
  lt: 'gte',
  lte: 'gt',
  min: 'lt',
  max: 'gt',
  between: 'not_between',
  not_between: 'between',
  is_set: 'is_not_set',
  is_not_set: 'is_set',
  is_date_before: 'is_date_after',
  is_date_after: 'is_date_before',
  // PostHog leaves is_date_exact un-negated too.
  is_date_exact: 'is_date_exact',
};

const UNSUPPORTED_TYPES: Readonly<Record<string, string>> = {
  cohort: 'Cohort filters are not supported',
  'static-cohort': 'Cohort filters are not supported',
  'dynamic-cohort': 'Cohort filters are not supported',
  'precalculated-cohort': 'Cohort filters are not supported',
  group: 'Group property filters are not supported',
  element: 'Element filters are not supported',
  session: 'Session filters are not supported',
};

type FilterGroup = { kind: 'group'; operator: 'AND' | 'OR'; children: FilterNode[] };
type FilterItem = {
  kind: 'item';
  key: string;
  value: unknown;
  operator: string;
  type: string;
  negation: boolean;
};
type FilterNode = FilterGroup | FilterItem;

/** Text that is not JSON is PostHog's 400 "Properties are unparsable!". */
export function parsePropertiesParam(raw: string | undefined): unknown {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new HogQLError('Properties are unparsable!', { kind: 'syntax', attr: 'properties' });
  }
}

/** Null when there is nothing to filter on; list items that are not objects with a key are dropped, as PostHog drops them. */
export async function compilePropertyFilters(
  input: unknown,
  params: QueryParams,
  options: PropertyFilterOptions = {},
): Promise<string | null> {
  const limits = { ...DEFAULT_PROPERTY_FILTER_LIMITS, ...options.limits };
  const context: Context = {
    params,
    limits,
    now: options.now ?? new Date(),
    plainPropertiesColumn: options.plainPropertiesColumn,
    compiler: options.compiler,
    count: 0,
  };
  const root = normalizeRoot(input, context);
  return compileNode(root, context);
}

interface Context {
  params: QueryParams;
  limits: PropertyFilterLimits;
  now: Date;
  plainPropertiesColumn: string | undefined;
  compiler: HogQLCompiler | undefined;
  count: number;
}

function fail(message: string, kind: 'syntax' | 'unsupported' | 'value' | 'limit' | 'type' = 'value'): never {
  throw new HogQLError(message, { kind, attr: 'properties' });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function groupOperator(value: Record<string, unknown>): 'AND' | 'OR' | undefined {
  if (typeof value.type !== 'string' || !Array.isArray(value.values)) return undefined;
  const type = value.type.toUpperCase();
  return type === 'AND' || type === 'OR' ? type : undefined;
}

function normalizeRoot(input: unknown, context: Context): FilterGroup {
  if (input === undefined || input === null) return { kind: 'group', operator: 'AND', children: [] };
  if (Array.isArray(input)) return normalizeGroup('AND', input, 1, context);
  if (!isRecord(input)) fail('Properties must be a list of filters, a property group or an object', 'syntax');
  const operator = groupOperator(input);
  if (operator) return normalizeGroup(operator, input.values as unknown[], 1, context);
  if (typeof input.type === 'string' && Array.isArray(input.values)) {
    fail(`Property group type must be AND or OR, not ${JSON.stringify(input.type)}`, 'syntax');
  }
  // Legacy: {"$browser": "Chrome", "$current_url__icontains": "x"}.
  const children: FilterNode[] = Object.entries(input).map(([name, value]) => {
    const [key, operator] = name.split('__');
    return item({ key, value, operator }, context);
  });
  return { kind: 'group', operator: 'AND', children };
}

function normalizeGroup(
  operator: 'AND' | 'OR',
  values: readonly unknown[],
  depth: number,
  context: Context,
): FilterGroup {
  if (depth > context.limits.maxGroupDepth) {
    fail(`Property groups nest deeper than ${context.limits.maxGroupDepth} levels`, 'limit');
  }
  const children: FilterNode[] = [];
  for (const value of values) {
    if (!isRecord(value)) continue;
    const nested = groupOperator(value);
    if (nested) {
      children.push(normalizeGroup(nested, value.values as unknown[], depth + 1, context));
      continue;
    }
    if (typeof value.type === 'string' && Array.isArray(value.values)) {
      fail(`Property group type must be AND or OR, not ${JSON.stringify(value.type)}`, 'syntax');
    }
    const key = value.key;
    if ((typeof key !== 'string' || key === '') && typeof key !== 'number') continue;
    children.push(item(value, context));
  }
  return { kind: 'group', operator, children };
}

function item(value: Record<string, unknown>, context: Context): FilterItem {
  context.count += 1;
  if (context.count > context.limits.maxFilters) {
    fail(`At most ${context.limits.maxFilters} property filters are allowed`, 'limit');
  }
  const key = String(value.key);
  if (Array.from(key).length > context.limits.maxKeyLength) {
    fail(`Property key longer than ${context.limits.maxKeyLength} characters`, 'limit');
  }
  const operator = value.operator === undefined || value.operator === null ? 'exact' : value.operator;
  const type = value.type === undefined || value.type === null ? 'event' : value.type;
  if (typeof operator !== 'string')
    fail(`Property filter on ${quoteExpression(key)}: operator must be a string`, 'syntax');
  if (typeof type !== 'string')
    fail(`Property filter on ${quoteExpression(key)}: type must be a string`, 'syntax');
  return { kind: 'item', key, value: value.value, operator, type, negation: value.negation === true };
}

async function compileNode(node: FilterNode, context: Context): Promise<string | null> {
  if (node.kind === 'item') return compileItem(node, context);
  const parts: string[] = [];
  for (const child of node.children) {
    const sql = await compileNode(child, context);
    if (sql !== null) parts.push(sql);
  }
  if (parts.length === 0) return null;
  if (parts.length === 1) return parts[0];
  return `${node.operator === 'AND' ? 'and' : 'or'}(${parts.join(', ')})`;
}

interface Target {
  /** A string unescaped, anything else as JSON; '' when missing or null. */
  text: string;
  isSet: string;
  isNotSet: string;
  /** The JSON column and key read, with the column's plain flag, when the table has one. */
  plainJson?: { column: string; key: string; flag: string };
}

function isOperator(operator: string): operator is PropertyFilterOperator {
  return (PROPERTY_FILTER_OPERATORS as readonly string[]).includes(operator);
}

async function compileItem(filter: FilterItem, context: Context): Promise<string> {
  const where = `Property filter on ${quoteExpression(filter.key)}`;
  if (filter.type === 'hogql') {
    const compiler = context.compiler ?? new HogQLCompiler();
    return compiler.compileCondition(filter.key, context.params, 'properties');
  }
  if (Object.hasOwn(UNSUPPORTED_TYPES, filter.type))
    fail(`${UNSUPPORTED_TYPES[filter.type]} (${where})`, 'unsupported');
  if (!isOperator(filter.operator)) {
    fail(`${where}: unknown operator ${quoteExpression(filter.operator)}`, 'unsupported');
  }
  const operator = filter.negation ? NEGATED[filter.operator] : filter.operator;
  const target = targetOf(filter, where, context);
  const { params } = context;
  switch (operator) {
    case 'exact':
    case 'in': {
      const condition = exact(target, filter, where, context);
      const prefilter = plainTextPrefilter(target, filter, where, context);
      return prefilter === undefined ? condition : `and(${prefilter}, ${condition})`;
    }
    case 'is_not':
    case 'not_in':
      return `not(${exact(target, filter, where, context)})`;
    case 'icontains':
    case 'not_icontains': {
      const matches = textValues(filter, where, context).map((value) => {
        const pattern = `%${value}%`;
        const problem = likePatternError(pattern);
        if (problem !== undefined) fail(`${where}: ${problem}`);
        return `ilike(${target.text}, ${params.string(pattern)})`;
      });
      if (matches.length === 0) return operator === 'icontains' ? '0' : '1';
      return operator === 'icontains' ? anyOf(matches) : `not(${anyOf(matches)})`;
    }
    case 'regex':
    case 'not_regex': {
      const matches = textValues(filter, where, context).map((pattern) => {
        if (Array.from(pattern).length > MAX_REGEX_LENGTH) {
          fail(`${where}: regular expression longer than ${MAX_REGEX_LENGTH} characters`, 'limit');
        }
        const problem = re2SyntaxError(pattern);
        if (problem !== undefined)
          fail(`${where}: invalid regular expression ${quoteExpression(pattern)} (${problem})`);
        return `match(${target.text}, ${params.string(pattern)})`;
      });
      if (matches.length === 0) return operator === 'regex' ? '0' : '1';
      return operator === 'regex' ? anyOf(matches) : `not(${anyOf(matches)})`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'min':
    case 'max': {
      const fn = {
        gt: 'greater',
        gte: 'greaterOrEquals',
        min: 'greaterOrEquals',
        lt: 'less',
        lte: 'lessOrEquals',
        max: 'lessOrEquals',
      }[operator];
      const number = numericValue(single(filter.value, where), where);
      return `ifNull(${fn}(${numeric(target)}, ${params.float(number)}), 0)`;
    }
    case 'between':
    case 'not_between': {
      const bounds = Array.isArray(filter.value) ? filter.value : [];
      if (bounds.length !== 2) fail(`${where}: ${operator} takes a list of two numbers [min, max]`);
      const low = numericValue(bounds[0], where);
      const high = numericValue(bounds[1], where);
      if (low > high) fail(`${where}: ${operator} needs min <= max`);
      const value = numeric(target);
      return operator === 'between'
        ? `ifNull(and(greaterOrEquals(${value}, ${params.float(low)}), lessOrEquals(${value}, ${params.float(high)})), 0)`
        : `ifNull(or(less(${value}, ${params.float(low)}), greater(${value}, ${params.float(high)})), 0)`;
    }
    case 'is_set':
      return target.isSet;
    case 'is_not_set':
      return target.isNotSet;
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return dateComparison(operator, target, filter, where, context);
  }
}

function targetOf(filter: FilterItem, where: string, context: Context): Target {
  const { params } = context;
  if (filter.type === 'event' || filter.type === 'feature' || filter.type === 'person') {
    const column = filter.type === 'person' ? 'person_properties' : 'properties';
    // The elements chain is a column that PostHog lets filters name as a property.
    if (filter.key === '$elements_chain' && column === 'properties') {
      return columnTarget('elements_chain', 'string');
    }
    const key = params.string(filter.key);
    const flag = column === 'properties' ? context.plainPropertiesColumn : undefined;
    return {
      text: `JSONExtractString(${column}, ${key})`,
      isSet: `JSONHas(${column}, ${key})`,
      isNotSet: `not(JSONHas(${column}, ${key}))`,
      plainJson: flag === undefined ? undefined : { column, key: filter.key, flag },
    };
  }
  if (filter.type === 'event_metadata') {
    const column = EVENT_FIELDS.get(filter.key);
    if (!column || filter.key === 'properties' || filter.key === 'person_properties') {
      fail(`${where}: not an event column`, 'unsupported');
    }
    return columnTarget(column.sql, column.type);
  }
  return fail(
    `Property filter type ${quoteExpression(filter.type)} is not supported (${where})`,
    'unsupported',
  );
}

function columnTarget(sql: string, type: string): Target {
  const text = type === 'string' ? sql : `toString(${sql})`;
  return { text, isSet: `notEmpty(${text})`, isNotSet: `empty(${text})` };
}

/** The filter's values as PostHog boxes them: a list, each value in its JSON spelling. */
function textValues(filter: FilterItem, where: string, context: Context): string[] {
  const values = Array.isArray(filter.value) ? filter.value : [filter.value];
  if (values.length > context.limits.maxValues) {
    fail(`${where}: more than ${context.limits.maxValues} values`, 'limit');
  }
  return values.map((value) => {
    const text = scalarText(value, where);
    if (Array.from(text).length > context.limits.maxValueLength) {
      fail(`${where}: a value is longer than ${context.limits.maxValueLength} characters`, 'limit');
    }
    return text;
  });
}

function scalarText(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(`${where}: numbers must be finite`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return fail(`${where}: a value is required`);
}

/** JSON given as text (`'[1, 2]'`) also matches the value it spells, in ClickHouse's compact form. */
function compactJson(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return undefined;
  try {
    const compact = JSON.stringify(JSON.parse(value));
    return compact === value ? undefined : compact;
  } catch {
    return undefined;
  }
}

function exact(target: Target, filter: FilterItem, where: string, context: Context): string {
  const values = Array.isArray(filter.value) ? filter.value : [filter.value];
  const texts = textValues(filter, where, context);
  values.forEach((value) => {
    const compact = compactJson(value);
    if (compact !== undefined) texts.push(compact);
  });
  if (texts.length === 0) return '0';
  const bound = texts.map((text) => context.params.string(text));
  return bound.length === 1
    ? `equals(${target.text}, ${bound[0]})`
    : `in(${target.text}, tuple(${bound.join(', ')}))`;
}

/** multiSearchAny takes at most 255 needles. */
const MAX_NEEDLES = 255;
/** What a plain row never holds raw: a quote, a backslash, a control character, a lone surrogate. */
const NOT_RAW_IN_PLAIN_JSON = /["\\\u0000-\u001f]|\p{Surrogate}/u;
const JSON_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * A cheap superset test for `exact`: a substring search skips parsing rows that cannot match.
 * TRICKY: it must hold for every row `exact` matches. A plain row has no backslash, no whitespace
 * after a quote or colon and no number with a fraction or exponent, so a value reading as text T
 * starts with `"T"`, T, `{` or `[`. No test for '' (a missing key reads as '' too).
 */
function plainTextPrefilter(
  target: Target,
  filter: FilterItem,
  where: string,
  context: Context,
): string | undefined {
  const plain = target.plainJson;
  if (!plain || NOT_RAW_IN_PLAIN_JSON.test(plain.key)) return undefined;
  const values = Array.isArray(filter.value) ? filter.value : [filter.value];
  const texts = textValues(filter, where, context);
  values.forEach((value) => {
    const compact = compactJson(value);
    if (compact !== undefined) texts.push(compact);
  });
  if (texts.length === 0 || texts.includes('')) return undefined;
  const member = `"${plain.key}":`;
  const needles = new Set<string>();
  for (const text of texts) {
    if (!NOT_RAW_IN_PLAIN_JSON.test(text)) needles.add(`${member}"${text}"`);
    if (JSON_INTEGER.test(text) || text === 'true' || text === 'false') needles.add(member + text);
    if (text === '0') needles.add(`${member}-0`);
    if (text.startsWith('{') || text.startsWith('[')) needles.add(member + text[0]);
  }
  if (needles.size === 0) return `equals(${plain.flag}, 0)`;
  if (needles.size > MAX_NEEDLES) return undefined;
  const bound = [...needles].map((needle) => context.params.string(needle));
  return `or(equals(${plain.flag}, 0), multiSearchAny(${plain.column}, [${bound.join(', ')}]))`;
}

function anyOf(conditions: readonly string[]): string {
  return conditions.length === 1 ? conditions[0] : `or(${conditions.join(', ')})`;
}

/** PostHog reads a property as a number after removing spaces and quotes. */
function numeric(target: Target): string {
  return `toFloat64OrNull(replaceRegexpAll(replaceRegexpAll(${target.text}, ' ', ''), '^"|"$', ''))`;
}

function single(value: unknown, where: string): unknown {
  if (!Array.isArray(value)) return value;
  if (value.length !== 1) fail(`${where}: takes one value`);
  return value[0];
}

function numericValue(value: unknown, where: string): number {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value.trim())
        : Number.NaN;
  if (!Number.isFinite(number)) fail(`${where}: ${JSON.stringify(value) ?? 'the value'} is not a number`);
  return number;
}

function dateComparison(
  operator: 'is_date_before' | 'is_date_after' | 'is_date_exact',
  target: Target,
  filter: FilterItem,
  where: string,
  context: Context,
): string {
  const raw = single(filter.value, where);
  const parsed = typeof raw === 'string' ? parseFilterDate(raw, context.now) : undefined;
  if (!parsed) {
    fail(
      `${where}: ${JSON.stringify(raw) ?? 'the value'} is not a date (use ISO 8601, like 2024-01-31, or a relative date like -7d)`,
    );
  }
  const at = (value: DateValue): string =>
    `toDateTime64(${context.params.string(formatClickHouseDateTime(value))}, 6, 'UTC')`;
  // Best effort, like PostHog: the whole text, else its first 10 characters (a date).
  const property =
    `coalesce(parseDateTime64BestEffortOrNull(${target.text}, 6, 'UTC'), ` +
    `parseDateTime64BestEffortOrNull(substring(${target.text}, 1, 10), 6, 'UTC'))`;
  if (operator === 'is_date_before') return `ifNull(less(${property}, ${at(parsed)}), 0)`;
  if (operator === 'is_date_after') {
    return parsed.dateOnly
      ? `ifNull(greaterOrEquals(${property}, ${at(addMicros(parsed, ONE_DAY_MICROS))}), 0)`
      : `ifNull(greater(${property}, ${at(parsed)}), 0)`;
  }
  const start = parsed.dateOnly
    ? parsed
    : { epochMicros: parsed.epochMicros - (parsed.epochMicros % ONE_SECOND_MICROS), dateOnly: false };
  const end = addMicros(start, parsed.dateOnly ? ONE_DAY_MICROS : ONE_SECOND_MICROS);
  return `ifNull(and(greaterOrEquals(${property}, ${at(start)}), less(${property}, ${at(end)})), 0)`;
}
