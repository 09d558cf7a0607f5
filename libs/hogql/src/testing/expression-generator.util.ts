/**
 * Random HogQL expressions and property filters for fuzz tests: well-formed ones built from the
 * grammar (so many compile and reach ClickHouse) and hostile ones (injection attempts, stray
 * quotes and comments, forbidden fields, odd Unicode). Seeded, so a failure replays. Test-only.
 */
export type Random = () => number;

/** mulberry32: small, fast, good enough for test inputs. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

const FIELDS = [
  'event',
  'uuid',
  'id',
  'distinct_id',
  'timestamp',
  'created_at',
  'person_id',
  'elements_chain',
  'properties',
  'properties.$browser',
  'properties.price',
  'properties.nested.a.b',
  "properties['weird key']",
  'properties.`a b`',
  'person.properties.email',
  'person.id',
  'person.created_at',
  'person.properties',
  '$group_0',
  '$group_4',
  'properties.date',
  'properties.flag',
];

const FUNCTIONS = [
  'count',
  'countIf',
  'sum',
  'avg',
  'min',
  'max',
  'uniq',
  'any',
  'lower',
  'upper',
  'length',
  'concat',
  'substring',
  'trim',
  'toString',
  'toInt',
  'toFloat',
  'toDate',
  'toDateTime',
  'now',
  'today',
  'toStartOfDay',
  'toStartOfHour',
  'toStartOfWeek',
  'toStartOfMonth',
  'dateDiff',
  'dateAdd',
  'coalesce',
  'ifNull',
  'if',
  'multiIf',
  'round',
  'floor',
  'abs',
  'JSONExtractString',
  'JSONExtractInt',
  'JSONHas',
  'isNull',
  'match',
  'extract',
  'startsWith',
  'replace',
  'position',
  'empty',
  'toYear',
  'toHour',
  'dateSub',
];

const COMPARISONS = [
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'like',
  'ilike',
  'not like',
  'not ilike',
  '=~',
  '!~',
  '=~*',
];
const ARITHMETIC = ['+', '-', '*', '/', '%'];
const LOGICAL = ['and', 'or'];
const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'];

const ODD_CHARACTERS = [
  "'",
  '"',
  '`',
  '\\',
  '\n',
  '\t',
  '\u0000',
  '%',
  '_',
  '{',
  '}',
  '(',
  ')',
  ';',
  '-',
  '/',
  '*',
  'é',
  '💥',
  '\u202e',
  '\ufeff',
  '$',
  ':',
  'p0',
  'String',
];

/** A string with quotes, backslashes, control characters and SQL-ish bits, escaped as a HogQL literal. */
export function randomText(random: Random, maxLength = 12): string {
  const length = Math.floor(random() * maxLength);
  let text = '';
  for (let index = 0; index < length; index += 1) {
    text +=
      random() < 0.4 ? pick(random, ODD_CHARACTERS) : String.fromCharCode(97 + Math.floor(random() * 26));
  }
  return text;
}

export function hogqlString(text: string): string {
  const escaped = text
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "\\'")
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t')
    .replace(/\u0000/g, '\\0');
  return `'${escaped}'`;
}

function literal(random: Random): string {
  switch (Math.floor(random() * 9)) {
    case 0:
      return String(Math.floor(random() * 1000) - 500);
    case 1:
      return (random() * 100).toFixed(2);
    case 2:
      return pick(random, ['true', 'false', 'null']);
    case 3:
      return hogqlString(pick(random, ['2024-01-11', '2024-01-12T10:00:00Z', '2024-01-10 12:00:00.5']));
    case 4:
      return hogqlString(pick(random, ['Chrome', '$pageview', 'signup', 'a@x.com', '%x%', '^C']));
    case 5:
      return hogqlString('00000000-0000-4000-8000-000000000001');
    case 6:
      return `interval ${Math.floor(random() * 10)} ${pick(random, UNITS)}`;
    default:
      return hogqlString(randomText(random));
  }
}

/** A random expression from the HogQL grammar; many compile, many are type errors. */
export function generateExpression(random: Random, depth = 0): string {
  const leaf = depth >= 3 || random() < 0.3;
  if (leaf) return random() < 0.55 ? pick(random, FIELDS) : literal(random);
  switch (Math.floor(random() * 10)) {
    case 0:
    case 1:
      return `${generateExpression(random, depth + 1)} ${pick(random, COMPARISONS)} ${generateExpression(random, depth + 1)}`;
    case 2:
      return `(${generateExpression(random, depth + 1)} ${pick(random, ARITHMETIC)} ${generateExpression(random, depth + 1)})`;
    case 3:
      return `(${generateExpression(random, depth + 1)} ${pick(random, LOGICAL)} ${generateExpression(random, depth + 1)})`;
    case 4:
      return `not (${generateExpression(random, depth + 1)})`;
    case 5:
      return `${generateExpression(random, depth + 1)} in (${[literal(random), literal(random)].join(', ')})`;
    case 6:
      return `${generateExpression(random, depth + 1)} is ${random() < 0.5 ? '' : 'not '}null`;
    case 7: {
      const name = pick(random, FUNCTIONS);
      if (name === 'dateDiff' || name === 'dateAdd' || name === 'dateSub') {
        return `${name}('${pick(random, UNITS)}', ${generateExpression(random, depth + 1)}, ${generateExpression(random, depth + 1)})`;
      }
      const count = Math.floor(random() * 3);
      const args = Array.from({ length: count }, () => generateExpression(random, depth + 1));
      return `${name}(${args.join(', ')})`;
    }
    case 8:
      return `case when ${generateExpression(random, depth + 1)} then ${generateExpression(random, depth + 1)} else ${generateExpression(random, depth + 1)} end`;
    default:
      return `${generateExpression(random, depth + 1)} between ${literal(random)} and ${literal(random)}`;
  }
}

const HOSTILE = [
  "'; DROP TABLE events; --",
  '1; DROP TABLE events',
  "event = 'x' OR 1=1",
  "event = '' OR team_id = 2",
  'team_id = 2',
  'team_id',
  '`team_id` = 2',
  '"team_id"',
  'events.team_id',
  'e.team_id',
  'TEAM_ID = 1',
  '_timestamp',
  '_offset',
  '(SELECT team_id FROM events)',
  'event IN (SELECT event FROM events WHERE team_id = 2)',
  'EXISTS(SELECT 1)',
  "file('/etc/passwd')",
  "url('http://evil')",
  "remote('localhost', system.tables)",
  'system.tables',
  "dictGet('d', 'a', 1)",
  'sleep(3)',
  "repeat('a', 1000000000)",
  'event /* comment */',
  'event -- comment',
  'event # comment',
  "f'{team_id}'",
  '{team_id}',
  '{p0:String}',
  'event = {p0:String}',
  'x -> x',
  'arrayMap(x -> x, [1])',
  'count() over (partition by team_id)',
  'sum(x) filter (where team_id = 2)',
  'quantile(0.5)(price)',
  'event::String',
  "properties.x = 'a' SETTINGS max_threads = 1",
  'event FORMAT JSON',
  "event INTO OUTFILE 'x'",
  'event UNION ALL SELECT 1',
  'person',
  '*',
  'properties.*',
  '`$group_0`; DROP',
  "properties.`'); DROP TABLE x; --` = 1",
  "properties[''') OR 1=1 --'] = 1",
  'properties[team_id] = 1',
  "concat(event, ''''') OR 1=1 --')",
  "event = '\\'; DROP TABLE events; --'",
  "event = '\\\\'; DROP",
  'event ==== 1',
  'event =',
  '((((((((((((((((((((event))))))))))))))))))))',
  'not not not not not not not not not not not not event',
  'lower(lower(lower(lower(lower(lower(lower(lower(lower(lower(lower(lower(lower(event)))))))))))))',
  '1e999999',
  '-9223372036854775809',
  '0x',
  "'unterminated",
  '`unterminated',
  '\u0000',
  '💥 = 1',
  'événement = 1',
  '\u202eevent',
  'in cohort 5',
  'person_id in cohort 1',
  '[1, 2, 3]',
  '(1, 2)',
  "{'a': 1}",
  "columns('.*')",
  'a.1',
  '<div />',
  'null',
  '',
  '   ',
];

/** A hostile expression: a known attack, a random token soup, or a mutation of a valid one. */
export function generateHostileExpression(random: Random): string {
  const roll = random();
  if (roll < 0.35) return pick(random, HOSTILE);
  if (roll < 0.65) {
    const tokens = [
      ...HOSTILE.slice(0, 10),
      ...FIELDS,
      ...COMPARISONS,
      ...ARITHMETIC,
      'select',
      'from',
      'where',
      'union',
      ';',
      ',',
      '(',
      ')',
      "'",
      '"',
      '`',
      '--',
      '/*',
      '*/',
      '{',
      '}',
      '[',
      ']',
      'team_id',
      '\\',
      randomText(random, 6),
    ];
    const count = 1 + Math.floor(random() * 12);
    return Array.from({ length: count }, () => pick(random, tokens)).join(pick(random, [' ', '', '\n']));
  }
  const valid = generateExpression(random);
  const at = Math.floor(random() * (valid.length + 1));
  return (
    valid.slice(0, at) +
    pick(random, [...ODD_CHARACTERS, ' team_id ', ' or 1=1 ', "'", ')']) +
    valid.slice(at)
  );
}

const FILTER_KEYS = [
  '$browser',
  'price',
  'email',
  'date',
  'team_id',
  "'; DROP TABLE events; --",
  '`',
  '\\',
  '',
  'a.b',
  '__proto__',
  'constructor',
];
const FILTER_OPERATORS = [
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
  'between',
  'is_set',
  'is_not_set',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
  'semver_gt',
  'DROP',
  null,
];
const FILTER_TYPES = [
  'event',
  'person',
  'event',
  'event_metadata',
  'hogql',
  'cohort',
  'group',
  'element',
  'bogus',
  null,
];

function filterValue(random: Random): unknown {
  switch (Math.floor(random() * 9)) {
    case 0:
      return randomText(random);
    case 1:
      return Math.floor(random() * 100);
    case 2:
      return [randomText(random), Math.floor(random() * 10)];
    case 3:
      return pick(random, ['2024-01-31', '-7d', '2024-01-31T10:00:00Z', 'yesterday', '(', '[a-z]+', '\\']);
    case 4:
      return null;
    case 5:
      return { nested: randomText(random) };
    case 6:
      return pick(random, [true, false, Number.NaN, 1e308, -0]);
    case 7:
      return [];
    default:
      return pick(random, HOSTILE);
  }
}

function filterItem(random: Random): unknown {
  const type = pick(random, FILTER_TYPES);
  const key =
    type === 'hogql'
      ? random() < 0.5
        ? generateExpression(random)
        : generateHostileExpression(random)
      : type === 'event_metadata'
        ? pick(random, ['distinct_id', 'event', 'team_id', '$group_0', 'timestamp', randomText(random)])
        : random() < 0.7
          ? pick(random, FILTER_KEYS)
          : randomText(random);
  const item: Record<string, unknown> = {
    key,
    value: filterValue(random),
    operator: pick(random, FILTER_OPERATORS),
  };
  if (type !== null) item.type = type;
  if (random() < 0.1) item.negation = true;
  return item;
}

/** A random `properties` parameter: a list, a nested group or the legacy object, or junk. */
export function generatePropertyFilter(random: Random, depth = 0): unknown {
  const roll = random();
  if (roll < 0.45) return Array.from({ length: Math.floor(random() * 4) }, () => filterItem(random));
  if (roll < 0.75 && depth < 3) {
    return {
      type: pick(random, ['AND', 'OR', 'and', 'XOR']),
      values: Array.from({ length: Math.floor(random() * 3) }, () =>
        random() < 0.4 ? generatePropertyFilter(random, depth + 1) : filterItem(random),
      ),
    };
  }
  if (roll < 0.9) {
    return {
      [`${pick(random, FILTER_KEYS)}${random() < 0.5 ? `__${String(pick(random, FILTER_OPERATORS))}` : ''}`]:
        filterValue(random),
    };
  }
  return pick(random, [null, 'text', 42, [null, 1, 'x'], [[{ key: 'a' }]], { type: 'AND' }]);
}
