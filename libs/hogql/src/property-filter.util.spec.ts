import { HogQLError } from './hogql.errors';
import { closeSharedHogQLParser } from './hogql-parser.util';
import { compilePropertyFilters, parsePropertiesParam } from './property-filter.util';
import { QueryParams } from './query-params.util';

const NOW = new Date('2024-02-10T12:00:00Z');

afterAll(async () => {
  await closeSharedHogQLParser();
});

async function compile(filters: unknown): Promise<{ sql: string | null; params: Record<string, unknown> }> {
  const params = new QueryParams();
  const sql = await compilePropertyFilters(filters, params, { now: NOW });
  return { sql, params: { ...params.values } };
}

async function refuse(filters: unknown): Promise<HogQLError> {
  const error = await compilePropertyFilters(filters, new QueryParams(), { now: NOW }).catch(
    (caught: unknown) => caught,
  );
  if (!(error instanceof HogQLError)) throw new Error(`expected a HogQLError, got ${String(error)}`);
  expect(error.attr).toBe('properties');
  return error;
}

const one = (key: string, operator: string | undefined, value?: unknown, type = 'event') => [
  { key, operator, value, type },
];

const TEXT = 'JSONExtractString(properties, {p0:String})';
const NUMBER = `toFloat64OrNull(replaceRegexpAll(replaceRegexpAll(${TEXT}, ' ', ''), '^"|"$', ''))`;
const DATE = `coalesce(parseDateTime64BestEffortOrNull(${TEXT}, 6, 'UTC'), parseDateTime64BestEffortOrNull(substring(${TEXT}, 1, 10), 6, 'UTC'))`;

describe('operators', () => {
  it.each([
    ['exact', 'Chrome', `equals(${TEXT}, {p1:String})`, { p1: 'Chrome' }],
    [
      'exact',
      ['Chrome', 'Safari'],
      `in(${TEXT}, tuple({p1:String}, {p2:String}))`,
      { p1: 'Chrome', p2: 'Safari' },
    ],
    ['exact', 5, `equals(${TEXT}, {p1:String})`, { p1: '5' }],
    ['exact', 1.5, `equals(${TEXT}, {p1:String})`, { p1: '1.5' }],
    ['exact', true, `equals(${TEXT}, {p1:String})`, { p1: 'true' }],
    ['exact', [false], `equals(${TEXT}, {p1:String})`, { p1: 'false' }],
    ['exact', { k: 'v' }, `equals(${TEXT}, {p1:String})`, { p1: '{"k":"v"}' }],
    ['exact', '[1, 2]', `in(${TEXT}, tuple({p1:String}, {p2:String}))`, { p1: '[1, 2]', p2: '[1,2]' }],
    ['exact', [], '0', {}],
    [undefined, 'Chrome', `equals(${TEXT}, {p1:String})`, { p1: 'Chrome' }],
    ['in', ['a'], `equals(${TEXT}, {p1:String})`, { p1: 'a' }],
    ['is_not', 'Chrome', `not(equals(${TEXT}, {p1:String}))`, { p1: 'Chrome' }],
    ['is_not', ['a', 'b'], `not(in(${TEXT}, tuple({p1:String}, {p2:String})))`, { p1: 'a', p2: 'b' }],
    ['is_not', [], 'not(0)', {}],
    ['not_in', ['a'], `not(equals(${TEXT}, {p1:String}))`, { p1: 'a' }],
    ['icontains', 'chr', `ilike(${TEXT}, {p1:String})`, { p1: '%chr%' }],
    [
      'icontains',
      ['a', 'b'],
      `or(ilike(${TEXT}, {p1:String}), ilike(${TEXT}, {p2:String}))`,
      { p1: '%a%', p2: '%b%' },
    ],
    ['icontains', 42, `ilike(${TEXT}, {p1:String})`, { p1: '%42%' }],
    ['icontains', [], '0', {}],
    ['not_icontains', 'chr', `not(ilike(${TEXT}, {p1:String}))`, { p1: '%chr%' }],
    [
      'not_icontains',
      ['a', 'b'],
      `not(or(ilike(${TEXT}, {p1:String}), ilike(${TEXT}, {p2:String})))`,
      { p1: '%a%', p2: '%b%' },
    ],
    ['regex', '^C', `match(${TEXT}, {p1:String})`, { p1: '^C' }],
    [
      'regex',
      ['^a', 'b$'],
      `or(match(${TEXT}, {p1:String}), match(${TEXT}, {p2:String}))`,
      { p1: '^a', p2: 'b$' },
    ],
    ['not_regex', '^C', `not(match(${TEXT}, {p1:String}))`, { p1: '^C' }],
    ['gt', 5, `ifNull(greater(${NUMBER}, {p1:Float64}), 0)`, { p1: 5 }],
    ['gt', '5.5', `ifNull(greater(${NUMBER}, {p1:Float64}), 0)`, { p1: 5.5 }],
    ['gt', [' 7 '], `ifNull(greater(${NUMBER}, {p1:Float64}), 0)`, { p1: 7 }],
    ['gte', 5, `ifNull(greaterOrEquals(${NUMBER}, {p1:Float64}), 0)`, { p1: 5 }],
    ['lt', -1, `ifNull(less(${NUMBER}, {p1:Float64}), 0)`, { p1: -1 }],
    ['lte', 0, `ifNull(lessOrEquals(${NUMBER}, {p1:Float64}), 0)`, { p1: 0 }],
    ['min', 1, `ifNull(greaterOrEquals(${NUMBER}, {p1:Float64}), 0)`, { p1: 1 }],
    ['max', 1, `ifNull(lessOrEquals(${NUMBER}, {p1:Float64}), 0)`, { p1: 1 }],
    [
      'between',
      [1, 5],
      `ifNull(and(greaterOrEquals(${NUMBER}, {p1:Float64}), lessOrEquals(${NUMBER}, {p2:Float64})), 0)`,
      { p1: 1, p2: 5 },
    ],
    [
      'not_between',
      [1, '5'],
      `ifNull(or(less(${NUMBER}, {p1:Float64}), greater(${NUMBER}, {p2:Float64})), 0)`,
      { p1: 1, p2: 5 },
    ],
    ['is_set', undefined, 'JSONHas(properties, {p0:String})', {}],
    ['is_set', 'ignored', 'JSONHas(properties, {p0:String})', {}],
    ['is_not_set', undefined, 'not(JSONHas(properties, {p0:String}))', {}],
    [
      'is_date_before',
      '2024-01-31',
      `ifNull(less(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), 0)`,
      { p1: '2024-01-31 00:00:00.000000' },
    ],
    [
      'is_date_after',
      '2024-01-31',
      `ifNull(greaterOrEquals(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), 0)`,
      { p1: '2024-02-01 00:00:00.000000' },
    ],
    [
      'is_date_after',
      '2024-01-31T10:00:00Z',
      `ifNull(greater(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), 0)`,
      { p1: '2024-01-31 10:00:00.000000' },
    ],
    [
      'is_date_after',
      '-7d',
      `ifNull(greater(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), 0)`,
      { p1: '2024-02-03 12:00:00.000000' },
    ],
    [
      'is_date_before',
      ['-2m'],
      `ifNull(less(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), 0)`,
      { p1: '2023-12-10 12:00:00.000000' },
    ],
    [
      'is_date_exact',
      '2024-01-31',
      `ifNull(and(greaterOrEquals(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), less(${DATE}, toDateTime64({p2:String}, 6, 'UTC'))), 0)`,
      { p1: '2024-01-31 00:00:00.000000', p2: '2024-02-01 00:00:00.000000' },
    ],
    [
      'is_date_exact',
      '2024-01-31T10:00:00.750Z',
      `ifNull(and(greaterOrEquals(${DATE}, toDateTime64({p1:String}, 6, 'UTC')), less(${DATE}, toDateTime64({p2:String}, 6, 'UTC'))), 0)`,
      { p1: '2024-01-31 10:00:00.000000', p2: '2024-01-31 10:00:01.000000' },
    ],
  ])('%s %j', async (operator, value, sql, params) => {
    expect(await compile(one('$browser', operator, value))).toEqual({
      sql,
      params: { p0: '$browser', ...params },
    });
  });

  it.each([
    ['exact', 'is_not'],
    ['is_not', 'exact'],
    ['icontains', 'not_icontains'],
    ['regex', 'not_regex'],
    ['gt', 'lte'],
    ['lt', 'gte'],
    ['is_set', 'is_not_set'],
    ['is_date_before', 'is_date_after'],
    ['in', 'not_in'],
  ])('negation turns %s into %s', async (operator, negated) => {
    const value = operator.startsWith('is_date')
      ? '2024-01-31T00:00:00Z'
      : operator === 'gt' || operator === 'lt'
        ? 1
        : 'x';
    const withNegation = await compile([{ key: 'k', operator, value, negation: true }]);
    const direct = await compile([{ key: 'k', operator: negated, value }]);
    expect(withNegation).toEqual(direct);
  });
});

describe('property types', () => {
  it('reads person properties from person_properties', async () => {
    expect(await compile(one('email', 'exact', 'a@x.com', 'person'))).toEqual({
      sql: 'equals(JSONExtractString(person_properties, {p0:String}), {p1:String})',
      params: { p0: 'email', p1: 'a@x.com' },
    });
    expect((await compile(one('email', 'is_set', undefined, 'person'))).sql).toBe(
      'JSONHas(person_properties, {p0:String})',
    );
  });

  it('reads feature flags like event properties', async () => {
    expect((await compile(one('$feature/x', 'exact', 'true', 'feature'))).sql).toBe(
      `equals(${TEXT}, {p1:String})`,
    );
  });

  it('defaults the type to event', async () => {
    expect((await compile([{ key: 'a', value: 'b' }])).sql).toBe(`equals(${TEXT}, {p1:String})`);
  });

  it('reads $elements_chain from its column', async () => {
    expect(await compile(one('$elements_chain', 'icontains', 'button'))).toEqual({
      sql: 'ilike(elements_chain, {p0:String})',
      params: { p0: '%button%' },
    });
  });

  it.each([
    ['distinct_id', 'equals(distinct_id, {p0:String})'],
    ['event', 'equals(event, {p0:String})'],
    ['$group_2', 'equals(`$group_2`, {p0:String})'],
    ['timestamp', 'equals(toString(timestamp), {p0:String})'],
    ['person_id', 'equals(toString(person_id), {p0:String})'],
  ])('reads the event_metadata column %s', async (key, sql) => {
    expect((await compile(one(key, 'exact', 'x', 'event_metadata'))).sql).toBe(sql);
  });

  it('runs hogql filters through the HogQL compiler', async () => {
    expect(await compile([{ key: "properties.$browser = 'Chrome'", type: 'hogql' }])).toEqual({
      sql: "ifNull(equals(JSONExtract(properties, {p0:String}, 'Nullable(String)'), {p1:String}), 0)",
      params: { p0: '$browser', p1: 'Chrome' },
    });
  });

  it.each([
    [{ key: 'team_id', type: 'event_metadata', value: 2 }, 'not an event column'],
    [{ key: 'properties', type: 'event_metadata', value: 2 }, 'not an event column'],
    [{ key: 'constructor', type: 'event_metadata', value: 2 }, 'not an event column'],
    [{ key: 'team_id = 2', type: 'hogql' }, 'team_id cannot be selected or filtered on'],
    [{ key: 'count() > 1', type: 'hogql' }, 'only allowed in select'],
    [{ key: 'event', type: 'hogql' }, 'A string is not a condition'],
    [{ key: 5, value: 1, type: 'cohort' }, 'Cohort filters are not supported'],
    [{ key: 'id', value: 1, type: 'static-cohort' }, 'Cohort filters are not supported'],
    [
      { key: 'name', value: 'x', type: 'group', group_type_index: 0 },
      'Group property filters are not supported',
    ],
    [{ key: 'selector', value: 'a', type: 'element' }, 'Element filters are not supported'],
    [{ key: '$session_duration', value: 1, type: 'session' }, 'Session filters are not supported'],
    [{ key: 'a', value: 1, type: 'recording' }, 'Property filter type "recording" is not supported'],
    [{ key: 'a', value: 1, type: 'constructor' }, 'Property filter type "constructor" is not supported'],
  ])('refuses %j', async (filter, message) => {
    expect((await refuse([filter])).message).toContain(message);
  });
});

describe('values', () => {
  it.each([
    [one('a', 'exact', null), 'a value is required'],
    [one('a', 'exact', ['x', null]), 'a value is required'],
    [one('a', 'exact', Number.NaN), 'numbers must be finite'],
    [one('a', 'gt', 'abc'), '"abc" is not a number'],
    [one('a', 'gt', ''), '"" is not a number'],
    [one('a', 'gt', [1, 2]), 'takes one value'],
    [one('a', 'gt', null), 'null is not a number'],
    [one('a', 'between', [5, 1]), 'needs min <= max'],
    [one('a', 'between', [1]), 'takes a list of two numbers'],
    [one('a', 'regex', '('), 'invalid regular expression "(" (missing ))'],
    [one('a', 'not_regex', ['ok', '(?<=x)']), 'lookbehind is not supported'],
    [one('a', 'is_date_before', 'yesterday'), '"yesterday" is not a date'],
    [one('a', 'is_date_after', '2024-13-01'), 'is not a date'],
    [one('a', 'is_date_exact', 20240101), '20240101 is not a date'],
    [one('a', 'semver_gt', '1.0.0'), 'unknown operator "semver_gt"'],
    [one('a', 'DROP TABLE', 'x'), 'unknown operator "DROP TABLE"'],
    [[{ key: 'a', operator: 5, value: 'x' }], 'operator must be a string'],
    [[{ key: 'a', type: ['event'], value: 'x' }], 'type must be a string'],
  ])('refuses %j', async (filters, message) => {
    const error = await refuse(filters);
    expect(error.message).toContain(message);
    expect(error.message).toContain('Property filter on "a"');
  });

  it('binds hostile keys and values as parameters only', async () => {
    const key = "'); DROP TABLE events; --";
    const value = "x' OR 1=1 --\\";
    const { sql, params } = await compile(one(key, 'exact', value));
    expect(sql).toBe(`equals(${TEXT}, {p1:String})`);
    expect(params).toEqual({ p0: key, p1: value });
  });
});

describe('shapes', () => {
  it('ands a list', async () => {
    const { sql } = await compile([
      { key: 'a', value: 1 },
      { key: 'b', operator: 'is_set' },
    ]);
    expect(sql).toBe(`and(equals(${TEXT}, {p1:String}), JSONHas(properties, {p2:String}))`);
  });

  it('compiles AND/OR groups, nested, skipping empty ones', async () => {
    const { sql } = await compile({
      type: 'OR',
      values: [
        {
          type: 'AND',
          values: [
            { key: 'a', value: 1 },
            { key: 'b', value: 2 },
          ],
        },
        { type: 'and', values: [] },
        { type: 'OR', values: [{ key: 'c', value: 3 }] },
      ],
    });
    expect(sql).toBe(
      'or(and(equals(JSONExtractString(properties, {p0:String}), {p1:String}), equals(JSONExtractString(properties, {p2:String}), {p3:String})), equals(JSONExtractString(properties, {p4:String}), {p5:String}))',
    );
  });

  it('mixes items and groups in one group', async () => {
    const { sql } = await compile({
      type: 'AND',
      values: [
        { key: 'a', value: 1 },
        {
          type: 'OR',
          values: [
            { key: 'b', value: 2 },
            { key: 'c', value: 3 },
          ],
        },
      ],
    });
    expect(sql).toMatch(/^and\(equals\(.*\), or\(equals\(.*\), equals\(.*\)\)\)$/);
  });

  it('reads the legacy object form, with __operator suffixes', async () => {
    expect(await compile({ $browser: 'Chrome', price__gt: 5 })).toEqual({
      sql: `and(equals(${TEXT}, {p1:String}), ifNull(greater(${NUMBER.replace(/p0/g, 'p2')}, {p3:Float64}), 0))`,
      params: { p0: '$browser', p1: 'Chrome', p2: 'price', p3: 5 },
    });
  });

  it.each([undefined, null, [], {}, { type: 'AND', values: [] }])(
    'gives no condition for %j',
    async (filters) => {
      expect(await compile(filters)).toEqual({ sql: null, params: {} });
    },
  );

  it('drops list items that are not filters, as PostHog does', async () => {
    const { sql } = await compile([
      null,
      'x',
      5,
      [],
      { value: 'no key' },
      { key: '', value: 1 },
      { key: 'a', value: 'b' },
    ]);
    expect(sql).toBe(`equals(${TEXT}, {p1:String})`);
  });

  it('accepts numeric keys as text', async () => {
    expect((await compile([{ key: 5, value: 'x' }])).params).toEqual({ p0: '5', p1: 'x' });
  });

  it.each([
    ['text', 'Properties must be a list of filters, a property group or an object'],
    [42, 'Properties must be a list of filters, a property group or an object'],
    [{ type: 'XOR', values: [] }, 'Property group type must be AND or OR, not "XOR"'],
    [[{ type: 'NOT', values: [{ key: 'a' }] }], 'Property group type must be AND or OR, not "NOT"'],
  ])('refuses %j', async (filters, message) => {
    expect((await refuse(filters)).message).toBe(message);
  });
});

describe('limits', () => {
  it('refuses groups nested too deeply', async () => {
    let filters: unknown = [{ key: 'a', value: 1 }];
    for (let depth = 0; depth < 6; depth += 1) filters = { type: 'AND', values: [filters] };
    expect((await refuse(filters)).message).toBe('Property groups nest deeper than 5 levels');
  });

  it('refuses too many filters', async () => {
    const filters = Array.from({ length: 201 }, (_, index) => ({ key: `k${index}`, value: 1 }));
    expect((await refuse(filters)).message).toBe('At most 200 property filters are allowed');
  });

  it('refuses too many values', async () => {
    expect(
      (
        await refuse(
          one(
            'a',
            'exact',
            Array.from({ length: 1001 }, () => 'x'),
          ),
        )
      ).message,
    ).toContain('more than 1000 values');
  });

  it('refuses long values and keys', async () => {
    expect((await refuse(one('a', 'exact', 'x'.repeat(10_001)))).message).toContain(
      'longer than 10000 characters',
    );
    expect((await refuse(one('k'.repeat(1001), 'exact', 'x'))).message).toBe(
      'Property key longer than 1000 characters',
    );
  });
});

describe('parsePropertiesParam', () => {
  it('parses JSON', () => {
    expect(parsePropertiesParam('[{"key":"a","value":1}]')).toEqual([{ key: 'a', value: 1 }]);
  });

  it('gives undefined for a missing parameter', () => {
    expect(parsePropertiesParam(undefined)).toBeUndefined();
    expect(parsePropertiesParam('')).toBeUndefined();
  });

  it("answers PostHog's message for text that is not JSON", () => {
    expect(() => parsePropertiesParam('[{')).toThrow('Properties are unparsable!');
  });
});

describe('the text prefilter on a table with a plain-properties flag', () => {
  async function compilePlain(filters: unknown) {
    const params = new QueryParams();
    const sql = await compilePropertyFilters(filters, params, {
      now: NOW,
      plainPropertiesColumn: 'properties_plain',
    });
    return { sql, params: { ...params.values } };
  }
  const prefiltered = (needles: string, condition: string) =>
    `and(or(equals(properties_plain, 0), multiSearchAny(properties, [${needles}])), ${condition})`;

  it.each([
    [
      'a string',
      'Chrome',
      prefiltered('{p2:String}', `equals(${TEXT}, {p1:String})`),
      { p2: '"$browser":"Chrome"' },
    ],
    [
      'an integer, as a string or a number',
      7,
      prefiltered('{p2:String}, {p3:String}', `equals(${TEXT}, {p1:String})`),
      { p2: '"$browser":"7"', p3: '"$browser":7' },
    ],
    [
      'zero, also spelled -0',
      '0',
      prefiltered('{p2:String}, {p3:String}, {p4:String}', `equals(${TEXT}, {p1:String})`),
      { p2: '"$browser":"0"', p3: '"$browser":0', p4: '"$browser":-0' },
    ],
    [
      'a boolean',
      true,
      prefiltered('{p2:String}, {p3:String}', `equals(${TEXT}, {p1:String})`),
      { p2: '"$browser":"true"', p3: '"$browser":true' },
    ],
    [
      'an object, by its first character',
      { k: 'v' },
      prefiltered('{p2:String}', `equals(${TEXT}, {p1:String})`),
      { p2: '"$browser":{' },
    ],
    [
      'a value no plain row holds raw',
      'say "hi"',
      `and(equals(properties_plain, 0), equals(${TEXT}, {p1:String}))`,
      {},
    ],
  ])('searches %s', async (_name, value, sql, params) => {
    const compiled = await compilePlain(one('$browser', 'exact', value));
    expect(compiled.sql).toBe(sql);
    expect(compiled.params).toMatchObject(params);
  });

  it.each([
    ['an empty value, which a missing key also reads as', one('$browser', 'exact', ['x', ''])],
    ['a key no plain row holds raw', one('a"b', 'exact', 'x')],
    ['person properties, which have no flag', one('email', 'exact', 'a@x.com', 'person')],
    ['negations', one('$browser', 'is_not', 'Chrome')],
    ['other operators', one('$browser', 'icontains', 'chr')],
  ])('leaves alone %s', async (_name, filters) => {
    expect((await compilePlain(filters)).sql).not.toContain('properties_plain');
  });

  it('compiles as before without the flag', async () => {
    expect((await compile(one('$browser', 'exact', 'Chrome'))).sql).toBe(`equals(${TEXT}, {p1:String})`);
  });
});
