import type {
  CohortDefinition,
  CohortPropertyGroup,
  EvaluationContext,
  FlagConditionGroup,
  FlagDefinition,
  FlagProperty,
  FlagVariant,
} from '../flag-definition.types';

/**
 * Random flags, cohorts and persons for the parity test against posthog-node, kept where it and
 * PostHog's flags service agree by design: no integers compared as text, canonical numeric strings,
 * ISO dates with an offset, plain versions, ASCII regexes. The fixed tests pin where they differ.
 */

/** mulberry32: small, fast, and reproducible from a printed seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class RandomSource {
  constructor(readonly next: () => number) {}

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  subset<T>(items: readonly T[], probability: number): T[] {
    return items.filter(() => this.chance(probability));
  }
}

export const GROUP_TYPE_MAPPING = { '0': 'company', '1': 'project' } as const;

const WORDS = ['alpha', 'Beta', 'GAMMA', 'delta', 'pro', 'Free', 'enterprise', 'us', 'UK', 'de', 'x', ''];
const EMAILS = ['ann@posthog.com', 'Bob@Example.com', 'carl@example.org', 'dana@test.io', 'eve@POSTHOG.com'];
const VERSIONS = [
  '1.2.3',
  'v1.2.3',
  '1.2',
  '1',
  '0.2.3',
  '0.2.4',
  '0.0.3',
  '0.0.4',
  '0.3.0',
  '2.0.0',
  '1.10.0',
  '1.2.10',
  '1.3.0',
  '0.9',
  '3',
];
const VERSION_FILTERS = ['1.2.3', '1.2', '1', '0.2.3', '0.0.3', '0.2', '2.0.0', 'v1.2.3'];
const WILDCARDS = ['1.*', '1.2.*', '0.*', '2.*', '1.10.*'];
const FIXED_DATES = [
  '2024-01-15',
  '2023-12-31T23:59:59Z',
  '2024-06-01T12:00:00+02:00',
  '2024-06-01T10:00:00Z',
  '2025-02-28T00:00:00.500Z',
  '2020-05-05',
];
/** Hours before now, each well clear of a relative filter's boundary (-12h, -2w, -30d, -1m, -1y). */
const HOURS_AGO = [
  6,
  18,
  24 * 13,
  24 * 15,
  24 * 27,
  24 * 29 + 12,
  24 * 33,
  24 * 360,
  24 * 370,
  24 * 399,
  24 * 401,
];
const DATE_FILTERS = [
  '2024-01-15',
  '2024-06-01T10:00:00Z',
  '2023-01-01',
  '-30d',
  '-2w',
  '-1m',
  '-1y',
  '-12h',
  '-400d',
];
const REGEXES = ['^[a-z]+@', 'com$', 'a.c', '(pro|free)', '[0-9]{2,}', '^$', 'POSTHOG', '('];
const NUMBERS = [-3, 0, 1.5, 2, 10, 42, 99.9, 100, 1000];
const NUMERIC_STRINGS = ['-3', '0', '1.5', '2', '10', '42', '99.9', '100', '1000'];

type KeyKind = 'text' | 'email' | 'number' | 'version' | 'date' | 'bool';

/** Property keys with the kind of value each holds, so filters meet comparable values. */
const KEYS: ReadonlyArray<[string, KeyKind]> = [
  ['plan', 'text'],
  ['country', 'text'],
  ['email', 'email'],
  ['age', 'number'],
  ['score', 'number'],
  ['app_version', 'version'],
  ['signed_up_at', 'date'],
  ['beta_user', 'bool'],
];

const OPERATORS_BY_KIND: Record<KeyKind, readonly string[]> = {
  text: [
    'exact',
    'is_not',
    'icontains',
    'not_icontains',
    'starts_with',
    'not_starts_with',
    'ends_with',
    'not_ends_with',
    'regex',
    'not_regex',
    'is_set',
    'is_not_set',
  ],
  email: ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'ends_with', 'is_set'],
  number: ['gt', 'gte', 'lt', 'lte', 'icontains', 'is_set', 'is_not_set'],
  version: [
    'semver_eq',
    'semver_neq',
    'semver_gt',
    'semver_gte',
    'semver_lt',
    'semver_lte',
    'semver_tilde',
    'semver_caret',
    'semver_wildcard',
  ],
  date: ['is_date_before', 'is_date_after'],
  bool: ['exact', 'is_not', 'is_set'],
};

/** The same text in another case now and then, so case-insensitive operators are tested. */
function recase(random: RandomSource, text: string): string {
  const roll = random.next();
  if (roll < 0.2) return text.toUpperCase();
  if (roll < 0.4) return text.toLowerCase();
  return text;
}

export function randomPropertyValue(random: RandomSource, kind: KeyKind): unknown {
  switch (kind) {
    case 'text':
      return random.chance(0.08) ? random.pick([null, true, false, 1.5]) : recase(random, random.pick(WORDS));
    case 'email':
      return recase(random, random.pick(EMAILS));
    case 'number':
      return random.chance(0.5) ? random.pick(NUMBERS) : random.pick(NUMERIC_STRINGS);
    case 'version':
      return random.pick(VERSIONS);
    case 'date':
      if (random.chance(0.5)) return random.pick(FIXED_DATES);
      return new Date(Date.now() - random.pick(HOURS_AGO) * 3_600_000).toISOString();
    case 'bool':
      return random.pick([true, false, 'true', 'False', 'yes', null]);
  }
}

function randomFilterValue(random: RandomSource, kind: KeyKind, operator: string): unknown {
  if (operator === 'is_set' || operator === 'is_not_set') return random.chance(0.5) ? 'is_set' : null;
  switch (kind) {
    case 'text':
      if (operator.includes('regex')) return random.pick(REGEXES);
      if (operator === 'exact' || operator === 'is_not') {
        if (random.chance(0.3)) return random.subset(WORDS, 0.3);
        if (random.chance(0.1)) return random.pick(['true', 'false', true, false]);
      }
      return random.pick(WORDS);
    case 'email':
      if (operator.includes('regex')) return random.pick(REGEXES);
      if (operator === 'exact' || operator === 'is_not')
        return random.chance(0.4) ? random.subset(EMAILS, 0.4) : random.pick(EMAILS);
      return random.pick(['posthog', '@example', '.com', 'ANN', '.io']);
    case 'number':
      if (operator === 'icontains') return random.pick(['1', '0', '.', '4']);
      return random.chance(0.5) ? random.pick(NUMBERS) : random.pick(NUMERIC_STRINGS);
    case 'version':
      return operator === 'semver_wildcard' ? random.pick(WILDCARDS) : random.pick(VERSION_FILTERS);
    case 'date':
      return random.pick(DATE_FILTERS);
    case 'bool':
      return random.pick([true, false, 'true', 'false', ['true'], ['false']]);
  }
}

function randomFilter(random: RandomSource, type: 'person' | 'group'): FlagProperty {
  const [key, kind] = random.pick(KEYS);
  const operator = random.pick(OPERATORS_BY_KIND[kind]);
  const filter: FlagProperty = { key, type, operator, value: randomFilterValue(random, kind, operator) };
  if (operator === 'exact' && random.chance(0.2)) delete filter.operator;
  return filter;
}

function randomRollout(random: RandomSource): number | null | undefined {
  const roll = random.next();
  if (roll < 0.15) return 100;
  if (roll < 0.25) return null;
  if (roll < 0.3) return undefined;
  if (roll < 0.35) return 0;
  if (roll < 0.6) return random.int(1, 99) + random.int(0, 99) / 100;
  return random.int(1, 99);
}

function randomVariants(random: RandomSource): FlagVariant[] {
  const count = random.int(2, 5);
  const variants: FlagVariant[] = [];
  let left = random.chance(0.9) ? 100 : random.int(50, 99);
  for (let index = 0; index < count; index++) {
    const share = index === count - 1 ? left : random.int(0, left);
    left -= share;
    variants.push({ key: `variant-${index}-${random.pick(['a', 'b', 'c'])}`, rollout_percentage: share });
  }
  return variants;
}

/** Two-level cohorts as PostHog stores them; later cohorts may nest earlier ones. */
export function randomCohorts(random: RandomSource, count: number, firstId: number): CohortDefinition[] {
  const cohorts: CohortDefinition[] = [];
  for (let index = 0; index < count; index++) {
    const id = firstId + index;
    const groups: CohortPropertyGroup[] = [];
    for (let group = random.int(1, 3); group > 0; group--) {
      const values: FlagProperty[] = [];
      for (let leaf = random.int(1, 3); leaf > 0; leaf--) {
        if (cohorts.length > 0 && random.chance(0.15)) {
          values.push({ key: 'id', type: 'cohort', operator: 'in', value: random.pick(cohorts).id });
        } else {
          const filter = randomFilter(random, 'person');
          if (random.chance(0.25)) filter.negation = true;
          values.push(filter);
        }
      }
      groups.push({ type: random.pick(['AND', 'OR']), values });
    }
    cohorts.push({ id, is_static: false, properties: { type: random.pick(['AND', 'OR']), values: groups } });
  }
  return cohorts;
}

export function randomFlags(
  random: RandomSource,
  count: number,
  cohorts: readonly CohortDefinition[],
): FlagDefinition[] {
  const flags: FlagDefinition[] = [];
  for (let index = 0; index < count; index++) {
    const groupFlag = random.chance(0.25);
    const aggregation = groupFlag ? random.pick([0, 1]) : null;
    const variants = random.chance(0.4) ? randomVariants(random) : undefined;
    const conditions: FlagConditionGroup[] = [];
    for (let condition = random.int(0, 4); condition > 0; condition--) {
      const mixedGroup = !groupFlag && random.chance(0.1) ? random.pick([0, 1]) : undefined;
      const filterType = groupFlag || mixedGroup !== undefined ? 'group' : 'person';
      const properties: FlagProperty[] = [];
      for (let filter = random.int(0, 3); filter > 0; filter--)
        properties.push(randomFilter(random, filterType));
      if (!groupFlag && mixedGroup === undefined && cohorts.length > 0 && random.chance(0.15)) {
        properties.push({
          key: 'id',
          type: 'cohort',
          operator: random.pick(['in', 'not_in']),
          value: random.pick(cohorts).id,
        });
      }
      const earlier = flags.filter(
        (flag) => flag.active && flag.filters.aggregation_group_type_index == null,
      );
      if (!groupFlag && earlier.length > 0 && random.chance(0.15)) {
        const dependency = random.pick(earlier);
        const expected = dependency.filters.multivariate
          ? random.pick([true, false, ...dependency.filters.multivariate.variants.map((v) => v.key)])
          : random.pick([true, false]);
        properties.push({
          key: String(dependency.id),
          type: 'flag',
          operator: 'flag_evaluates_to',
          value: expected,
        });
      }
      const group: FlagConditionGroup = { properties: random.chance(0.1) ? null : properties };
      const rollout = randomRollout(random);
      if (rollout !== undefined) group.rollout_percentage = rollout;
      if (variants && random.chance(0.25))
        group.variant = random.chance(0.8) ? random.pick(variants).key : 'no-such-variant';
      if (mixedGroup !== undefined) group.aggregation_group_type_index = mixedGroup;
      conditions.push(group);
    }
    const id = 1000 + index;
    const payloads: Record<string, string> = {};
    for (const key of ['true', ...(variants ?? []).map((variant) => variant.key)]) {
      if (random.chance(0.5)) payloads[key] = JSON.stringify({ flag: id, key, n: random.int(0, 9) });
    }
    flags.push({
      id,
      key: `flag-${index}-${random.pick(['checkout', 'Search', 'beta', 'ü-ñ', 'x'])}`,
      name: `Flag ${index}`,
      active: random.chance(0.92),
      deleted: false,
      ensure_experience_continuity: false,
      version: random.int(1, 5),
      filters: {
        groups: conditions,
        ...(variants ? { multivariate: { variants } } : {}),
        ...(aggregation === null ? {} : { aggregation_group_type_index: aggregation }),
        ...(Object.keys(payloads).length > 0 ? { payloads } : {}),
        ...(!groupFlag && random.chance(0.1)
          ? { holdout: { id: random.int(1, 9), exclusion_percentage: random.int(0, 100) } }
          : {}),
      },
    });
  }
  return flags;
}

const ID_PARTS = ['user', 'anon', 'ü', '😀', 'id', '42', 'Z'];

export function randomContext(random: RandomSource): EvaluationContext {
  const distinctId = `${random.pick(ID_PARTS)}-${random.int(0, 1_000_000)}-${random.pick(ID_PARTS)}`;
  const personProperties: Record<string, unknown> = {};
  for (const [key, kind] of KEYS)
    if (random.chance(0.9)) personProperties[key] = randomPropertyValue(random, kind);
  const groups: Record<string, string | number> = {};
  const groupProperties: Record<string, Record<string, unknown>> = {};
  for (const typeName of Object.values(GROUP_TYPE_MAPPING)) {
    if (!random.chance(0.7)) continue;
    groups[typeName] = random.chance(0.2) ? random.int(1, 500) : `${typeName}-${random.int(0, 10_000)}`;
    const properties: Record<string, unknown> = {};
    for (const [key, kind] of KEYS)
      if (random.chance(0.9)) properties[key] = randomPropertyValue(random, kind);
    groupProperties[typeName] = properties;
  }
  return { distinctId, personProperties, groups, groupProperties, groupTypeMapping: GROUP_TYPE_MAPPING };
}
