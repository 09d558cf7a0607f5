import { hogqlErrorFromClickHouse } from './clickhouse-error.util';
import { HogQLCompiler } from './hogql-compiler.util';
import { HogQLError } from './hogql.errors';
import { hogqlFunctionNames } from './hogql-functions.util';
import { closeSharedHogQLParser } from './hogql-parser.util';
import { compilePropertyFilters } from './property-filter.util';
import { QueryParams } from './query-params.util';
import { re2SyntaxError } from './re2-syntax.util';
import { createTestEventsTable, type TestEventsTable } from './testing/test-events-table.util';
import {
  generateExpression,
  generatePropertyFilter,
  hogqlString,
  seededRandom,
} from './testing/expression-generator.util';

/**
 * Runs compiled SQL in chDB (ClickHouse's engine, in process) over a small events table: the SQL
 * is valid ClickHouse, means what the docs say, and never reaches another project's rows.
 */
const NOW = new Date('2024-02-10T00:00:00Z');
const WEIRD = 'it\'s \\ "quoted" \n\t é💥 \u0000 end';
/** HogQL string literals cannot hold NUL (its `\\0` escape reads as nothing, as in PostHog). */
const WEIRD_WITHOUT_NUL = WEIRD.replace('\u0000', '');

let events: TestEventsTable;
const compiler = new HogQLCompiler();

beforeAll(async () => {
  events = await createTestEventsTable();
  await events.insert([
    {
      uuid: '00000000-0000-4000-8000-000000000001',
      event: '$pageview',
      distinct_id: 'e1',
      team_id: 1,
      timestamp: '2024-01-10 12:00:00.000000',
      person_id: '00000000-0000-4000-8000-0000000000a1',
      properties: {
        $browser: 'Chrome',
        price: 10,
        flag: true,
        url: 'https://posthog.com/x',
        date: '2024-01-15T10:00:00Z',
        nested: { a: { b: 'deep' } },
        s: '5',
        $group_0: 'acme',
        list: ['x', 'y'],
      },
      person_properties: { email: 'a@x.com', plan: 'pro', name: 'Ann' },
      elements_chain: 'a.link:href="/x"',
    },
    {
      uuid: '00000000-0000-4000-8000-000000000002',
      event: '$pageview',
      distinct_id: 'e2',
      team_id: 1,
      timestamp: '2024-01-11 00:00:00.000000',
      properties: {
        $browser: 'Firefox',
        price: '20.5',
        flag: false,
        url: 'http://example.com/50%off',
        date: '2024-01-31',
        nested: { a: { b: 1 } },
        nullish: null,
        empty: '',
      },
      person_properties: { email: 'b@y.com' },
    },
    {
      uuid: '00000000-0000-4000-8000-000000000003',
      event: 'signup',
      distinct_id: 'e3',
      team_id: 1,
      timestamp: '2024-01-12 08:30:00.123456',
      properties: { $browser: 'chrome', price: 5, date: '2024-02-01 00:00:01', spaced: ' 42 ' },
    },
    {
      uuid: '00000000-0000-4000-8000-000000000004',
      event: 'signup',
      distinct_id: 'e4',
      team_id: 1,
      timestamp: '2024-01-13 00:00:00.000000',
      properties: {},
      person_properties: { email: null },
    },
    {
      uuid: '00000000-0000-4000-8000-000000000005',
      event: 'other',
      distinct_id: 'e5',
      team_id: 1,
      timestamp: '2024-01-14 00:00:00.000000',
      // Spaces as a client might send them: JSON values compare without them.
      properties: `{"$browser": null, "price": "abc", "obj": {"k": "v"}, "arr": [1, 2], "date": "not a date", "weird": ${JSON.stringify(WEIRD)}, "weird2": ${JSON.stringify(WEIRD_WITHOUT_NUL)}}`,
    },
    {
      uuid: '00000000-0000-4000-8000-000000000006',
      event: '$pageview',
      distinct_id: 'other-team',
      team_id: 2,
      properties: { $browser: 'Chrome', price: 10, weird: WEIRD },
      person_properties: { email: 'a@x.com' },
    },
  ]);
});

afterAll(async () => {
  await events?.drop();
  await closeSharedHogQLParser();
});

/** distinct_ids of team 1's events matching the condition. */
async function idsWhere(condition: string, params: QueryParams): Promise<string[]> {
  const rows = await events.query<{ distinct_id: string }>(
    `SELECT distinct_id FROM ${events.table} WHERE team_id = {team:Int64} AND ${condition} ORDER BY distinct_id`,
    { ...params.values, team: 1 },
  );
  return rows.map((row) => row.distinct_id);
}

async function filterIds(filters: unknown): Promise<string[]> {
  const params = new QueryParams();
  const condition = await compilePropertyFilters(filters, params, { now: NOW, compiler });
  return idsWhere(condition ?? '1', params);
}

async function whereIds(...expressions: string[]): Promise<string[]> {
  const params = new QueryParams();
  const where = await compiler.compileWhere(expressions, params);
  return idsWhere(where.sql ?? '1', params);
}

/** The values of one select expression for e1..e5, in order. */
async function selectValues(expression: string): Promise<unknown[]> {
  const params = new QueryParams();
  const select = await compiler.compileSelect([expression], params);
  const column = select.columns[0];
  const rows = await events.query<Record<string, unknown>>(
    `SELECT ${column.sql} AS ${column.columnAlias} FROM ${events.table} WHERE team_id = {team:Int64} ORDER BY distinct_id`,
    { ...params.values, team: 1 },
  );
  return rows.map((row) => row[column.columnAlias]);
}

describe('property filters in ClickHouse', () => {
  const event = (key: string, operator: string, value?: unknown) => [{ key, operator, value, type: 'event' }];

  it.each([
    ['exact on a string is case-sensitive', event('$browser', 'exact', 'Chrome'), ['e1']],
    ['exact with a list matches any', event('$browser', 'exact', ['Chrome', 'Firefox']), ['e1', 'e2']],
    ['exact on a number matches its JSON spelling', event('price', 'exact', 10), ['e1']],
    ['exact on a number given as text', event('price', 'exact', '20.5'), ['e2']],
    ['exact "5" matches the string "5"', event('s', 'exact', 5), ['e1']],
    ['exact true matches JSON true', event('flag', 'exact', true), ['e1']],
    ['exact "true" matches JSON true', event('flag', 'exact', 'true'), ['e1']],
    ['exact false', event('flag', 'exact', [false]), ['e2']],
    ['exact on an object compares its JSON', event('obj', 'exact', { k: 'v' }), ['e5']],
    ['exact on JSON text compares JSON', event('arr', 'exact', '[1, 2]'), ['e5']],
    ['exact with an empty list matches nothing', event('$browser', 'exact', []), []],
    ['exact on an odd string', event('weird', 'exact', WEIRD), ['e5']],
    ['in is exact', event('$browser', 'in', ['Firefox']), ['e2']],
    [
      'is_not keeps events without the property',
      event('$browser', 'is_not', 'Chrome'),
      ['e2', 'e3', 'e4', 'e5'],
    ],
    ['not_in', event('$browser', 'not_in', ['Chrome', 'chrome']), ['e2', 'e4', 'e5']],
    [
      'is_not with an empty list keeps everything',
      event('$browser', 'is_not', []),
      ['e1', 'e2', 'e3', 'e4', 'e5'],
    ],
    ['icontains is case-insensitive', event('$browser', 'icontains', 'CHROM'), ['e1', 'e3']],
    ['icontains treats % as a wildcard, as PostHog', event('url', 'icontains', '50%f'), ['e2']],
    ['icontains with a list matches any', event('$browser', 'icontains', ['fox', 'CHR']), ['e1', 'e2', 'e3']],
    ['not_icontains keeps missing', event('$browser', 'not_icontains', 'chrome'), ['e2', 'e4', 'e5']],
    ['regex', event('$browser', 'regex', '^[Cc]hrome$'), ['e1', 'e3']],
    ['regex with flags', event('url', 'regex', '(?i)POSTHOG\\.com'), ['e1']],
    ['not_regex keeps missing', event('$browser', 'not_regex', '^C'), ['e2', 'e3', 'e4', 'e5']],
    ['gt compares numbers, also numeric strings', event('price', 'gt', 6), ['e1', 'e2']],
    ['gt with a numeric string value', event('price', 'gt', '10'), ['e2']],
    ['gte', event('price', 'gte', 10), ['e1', 'e2']],
    ['lt', event('price', 'lt', 6), ['e3']],
    ['lte', event('price', 'lte', 5), ['e3']],
    ['gt reads a padded number', event('spaced', 'gt', 41), ['e3']],
    ['min and max', [...event('price', 'min', 5), ...event('price', 'max', 10)], ['e1', 'e3']],
    ['between', event('price', 'between', [6, 25]), ['e1', 'e2']],
    ['not_between', event('price', 'not_between', [6, 25]), ['e3']],
    ['is_set counts a null value as set', event('$browser', 'is_set'), ['e1', 'e2', 'e3', 'e5']],
    ['is_not_set', event('$browser', 'is_not_set'), ['e4']],
    ['is_date_before', event('date', 'is_date_before', '2024-01-31'), ['e1']],
    ['is_date_after a day means from the next day', event('date', 'is_date_after', '2024-01-31'), ['e3']],
    ['is_date_after a moment', event('date', 'is_date_after', '2024-01-15T09:00:00Z'), ['e1', 'e2', 'e3']],
    [
      'is_date_after with an offset',
      event('date', 'is_date_after', '2024-01-15T10:30:00+01:00'),
      ['e1', 'e2', 'e3'],
    ],
    ['is_date_exact a day', event('date', 'is_date_exact', '2024-01-31'), ['e2']],
    ['is_date_exact a second', event('date', 'is_date_exact', '2024-02-01T00:00:01Z'), ['e3']],
    ['is_date_after a relative date', event('date', 'is_date_after', '-14d'), ['e2', 'e3']],
    [
      'negation flips the operator',
      [{ key: '$browser', value: 'Chrome', negation: true }],
      ['e2', 'e3', 'e4', 'e5'],
    ],
    ['the default operator is exact', [{ key: '$browser', value: 'Firefox' }], ['e2']],
    ['person properties', [{ key: 'email', value: 'a@x.com', operator: 'exact', type: 'person' }], ['e1']],
    [
      'person is_not_set (JSON null counts as set)',
      [{ key: 'email', operator: 'is_not_set', type: 'person' }],
      ['e3', 'e5'],
    ],
    [
      'event_metadata reads a column',
      [{ key: 'distinct_id', value: ['e2', 'e3'], operator: 'exact', type: 'event_metadata' }],
      ['e2', 'e3'],
    ],
    ['$group_N as event metadata', [{ key: '$group_0', value: 'acme', type: 'event_metadata' }], ['e1']],
    ['hogql filters', [{ key: "properties.price > 6 and event = '$pageview'", type: 'hogql' }], ['e1', 'e2']],
    [
      'an OR group',
      {
        type: 'OR',
        values: [
          { key: '$browser', value: 'Firefox', operator: 'exact' },
          { key: 'price', value: 5, operator: 'exact' },
        ],
      },
      ['e2', 'e3'],
    ],
    [
      'nested groups',
      {
        type: 'AND',
        values: [
          {
            type: 'OR',
            values: [
              { key: '$browser', operator: 'icontains', value: 'chrome' },
              { key: 'price', operator: 'gt', value: 15 },
            ],
          },
          { type: 'AND', values: [{ key: 'price', operator: 'lt', value: 21 }] },
        ],
      },
      ['e1', 'e2', 'e3'],
    ],
    ['the legacy object form', { $browser: 'Chrome', price__gt: 6 }, ['e1']],
    ['a list item without a key is dropped', [{ value: 'x' }, ...event('price', 'lt', 6)], ['e3']],
  ])('%s', async (_name, filters, expected) => {
    expect(await filterIds(filters)).toEqual(expected);
  });

  it('never matches another project', async () => {
    expect(await filterIds(event('weird', 'exact', WEIRD))).toEqual(['e5']);
    expect(await filterIds([{ key: 'email', value: 'a@x.com', type: 'person' }])).toEqual(['e1']);
  });
});

describe('HogQL where in ClickHouse', () => {
  it.each([
    ["properties.$browser = 'Chrome'", ['e1']],
    ["properties.$browser != 'Chrome'", ['e2', 'e3', 'e4', 'e5']],
    ['properties.price > 6', ['e1', 'e2']],
    ['properties.price in (5, 10)', ['e1', 'e3']],
    ["properties.$browser not in ('Chrome')", ['e2', 'e3', 'e4', 'e5']],
    ["properties.$browser ilike 'chrome'", ['e1', 'e3']],
    ["properties.$browser not like 'C%'", ['e2', 'e3', 'e4', 'e5']],
    ["properties.$browser =~ '^C'", ['e1']],
    ["properties.$browser =~* '^C'", ['e1', 'e3']],
    ["properties.$browser !~ '^C'", ['e2', 'e3', 'e4', 'e5']],
    ['properties.$browser is null', ['e4', 'e5']],
    ['properties.$browser is not null', ['e1', 'e2', 'e3']],
    ["properties.empty = ''", ['e2']],
    ["properties.nested.a.b = 'deep'", ['e1']],
    ["properties['nested']['a'].b = '1'", ['e2']],
    ["person.properties.email like '%@x.com'", ['e1']],
    ["timestamp > '2024-01-11'", ['e3', 'e4', 'e5']],
    ["timestamp >= '2024-01-11T00:00:00Z'", ['e2', 'e3', 'e4', 'e5']],
    ["timestamp = '2024-01-12 08:30:00.123456'", ['e3']],
    ["toDate(timestamp) = '2024-01-12'", ['e3']],
    ["timestamp between '2024-01-11' and '2024-01-12T23:00:00Z'", ['e2', 'e3']],
    ['timestamp > now() - interval 100000 day', ['e1', 'e2', 'e3', 'e4', 'e5']],
    ["person_id = '00000000-0000-4000-8000-0000000000a1'", ['e1']],
    [
      "uuid in ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003')",
      ['e2', 'e3'],
    ],
    ["$group_0 = 'acme'", ['e1']],
    ["elements_chain like '%href%'", ['e1']],
    ["event = 'signup' and not (distinct_id = 'e3')", ['e4']],
    ["event = 'other' or properties.price < 6", ['e3', 'e5']],
    ["if(event = 'signup', 1, 0)", ['e3', 'e4']],
    ['case when properties.price > 6 then true else false end', ['e1', 'e2']],
    ["case event when 'other' then 1 else 0 end = 1", ['e5']],
    ['properties.price % 5 = 0 and properties.price > 0', ['e1', 'e3']],
    ['toFloat(properties.price) * 2 > 30', ['e2']],
    ['length(properties.weird) > 5', ['e5']],
    [`properties.weird2 = ${hogqlString(WEIRD_WITHOUT_NUL)}`, ['e5']],
    ['null', []],
    ['1', ['e1', 'e2', 'e3', 'e4', 'e5']],
  ])('%s', async (expression, expected) => {
    expect(await whereIds(expression)).toEqual(expected);
  });

  it('and-s several expressions', async () => {
    expect(await whereIds("event = '$pageview'", 'properties.price > 15')).toEqual(['e2']);
  });
});

describe('HogQL select in ClickHouse', () => {
  it.each([
    ['properties.$browser', ['Chrome', 'Firefox', 'chrome', null, null]],
    ['properties.price', ['10', '20.5', '5', null, 'abc']],
    ['properties.flag', ['true', 'false', null, null, null]],
    ['properties.nested.a', ['{"b":"deep"}', '{"b":1}', null, null, null]],
    ['properties.nullish', [null, null, null, null, null]],
    ['person.properties.email', ['a@x.com', 'b@y.com', null, null, null]],
    ['properties.price + 1', [11, 21.5, 6, null, null]],
    ['toInt(properties.price)', [10, null, 5, null, null]],
    [
      "concat(event, '-', properties.$browser)",
      ['$pageview-Chrome', '$pageview-Firefox', 'signup-chrome', 'signup-', 'other-'],
    ],
    ['coalesce(properties.$browser, event)', ['Chrome', 'Firefox', 'chrome', 'signup', 'other']],
    ["JSONExtractString(properties, 'nested', 'a', 'b')", ['deep', '1', '', '', '']],
    [
      'toStartOfDay(timestamp)',
      [
        '2024-01-10 00:00:00',
        '2024-01-11 00:00:00',
        '2024-01-12 00:00:00',
        '2024-01-13 00:00:00',
        '2024-01-14 00:00:00',
      ],
    ],
    ["dateDiff('day', timestamp, toDateTime('2024-01-20'))", [10, 9, 8, 7, 6]],
    ["extract(properties.url, '://([^/]+)')", ['posthog.com', 'example.com', null, null, null]],
    ['properties.price > 6', [1, 1, 0, 0, 0]],
  ])('%s', async (expression, expected) => {
    expect(await selectValues(expression)).toEqual(expected);
  });

  it('groups by the non-aggregate columns', async () => {
    const params = new QueryParams();
    const select = await compiler.compileSelect(['event', 'count()', 'sum(properties.price)'], params);
    const columns = select.columns.map((column) => `${column.sql} AS ${column.columnAlias}`).join(', ');
    const rows = await events.query(
      `SELECT ${columns} FROM ${events.table} WHERE team_id = {team:Int64} GROUP BY ${select.groupBy.join(', ')} ORDER BY c0`,
      { ...params.values, team: 1 },
    );
    expect(rows).toEqual([
      { c0: '$pageview', c1: 2, c2: 30.5 },
      { c0: 'other', c1: 1, c2: null },
      { c0: 'signup', c1: 2, c2: 5 },
    ]);
  });

  it('selects * and person as tuples without team_id', async () => {
    const params = new QueryParams();
    const select = await compiler.compileSelect(['*', 'person'], params);
    const rows = await events.query<{ c0: unknown[]; c1: unknown[] }>(
      `SELECT ${select.columns.map((column) => `${column.sql} AS ${column.columnAlias}`).join(', ')} FROM ${events.table} WHERE distinct_id = 'e1'`,
      params.values,
    );
    expect(rows[0].c0).toHaveLength(10);
    expect(rows[0].c0[1]).toBe('$pageview');
    expect(rows[0].c0).not.toContain(1);
    expect(rows[0].c1).toEqual([
      'e1',
      '00000000-0000-4000-8000-0000000000a1',
      '2023-12-01 00:00:00.000',
      'Ann',
      'a@x.com',
    ]);
  });

  it('has a sample that runs for every allowed function', async () => {
    const samples: Record<string, string> = {
      count: 'count()',
      countIf: "countIf(event = 'signup')",
      total: 'total()',
      uniq: 'uniq(distinct_id)',
      sum: 'sum(properties.price)',
      avg: 'avg(properties.price)',
      min: 'min(timestamp)',
      max: 'max(properties.$browser)',
      any: 'any(person_id)',
      lower: 'lower(event)',
      upper: 'upper(properties.$browser)',
      length: 'length(event)',
      empty: 'empty(properties.$browser)',
      notEmpty: 'notEmpty(event)',
      trim: 'trim(properties.spaced)',
      trimLeft: 'trimLeft(event)',
      trimRight: 'trimRight(properties.spaced)',
      startsWith: "startsWith(properties.url, 'https')",
      endsWith: "endsWith(event, 'up')",
      position: "position(event, 'g')",
      concat: 'concat(event, 1, timestamp, null, properties.price)',
      substring: 'substring(properties.url, 2, 3)',
      replace: "replace(event, '$', '')",
      replaceAll: "replaceAll(properties.url, '/', '|')",
      replaceOne: "replaceOne(event, 'p', 'P')",
      like: "like(event, '%up')",
      ilike: "ilike(properties.$browser, 'CHROME')",
      notLike: "notLike(event, '%up')",
      notILike: "notILike(properties.$browser, 'c%')",
      match: "match(properties.url, '^https?://')",
      extract: "extract(event, '[a-z]+')",
      toString: 'toString(timestamp)',
      toInt: 'toInt(properties.price)',
      toFloat: "toFloat('1.5')",
      toDate: 'toDate(properties.date)',
      toDateTime: 'toDateTime(properties.date)',
      now: 'now()',
      today: 'today()',
      toStartOfMinute: 'toStartOfMinute(timestamp)',
      toStartOfHour: 'toStartOfHour(toDate(timestamp))',
      toStartOfDay: 'toStartOfDay(person.created_at)',
      toStartOfWeek: 'toStartOfWeek(timestamp)',
      toMonday: 'toMonday(created_at)',
      toStartOfMonth: "toStartOfMonth('2024-05-05')",
      toStartOfQuarter: 'toStartOfQuarter(today())',
      toStartOfYear: 'toStartOfYear(properties.date)',
      toYear: 'toYear(timestamp)',
      toMonth: 'toMonth(timestamp)',
      toDayOfMonth: 'toDayOfMonth(timestamp)',
      toDayOfWeek: 'toDayOfWeek(timestamp)',
      toHour: 'toHour(timestamp)',
      toMinute: 'toMinute(today())',
      toSecond: 'toSecond(timestamp)',
      toUnixTimestamp: 'toUnixTimestamp(timestamp)',
      dateDiff: "dateDiff('hours', person.created_at, timestamp)",
      dateAdd: "dateAdd('month', 1, timestamp)",
      dateSub: "dateSub('day', properties.price, toDate(timestamp))",
      toIntervalSecond: 'timestamp + toIntervalSecond(5)',
      toIntervalMinute: 'timestamp - interval 5 minute',
      toIntervalHour: 'timestamp + interval 1 hour',
      toIntervalDay: 'today() - interval 2 day',
      toIntervalWeek: 'timestamp + interval 1 week',
      toIntervalMonth: 'timestamp + interval 1 month',
      toIntervalQuarter: 'timestamp + interval 1 quarter',
      toIntervalYear: 'timestamp + interval 1 year',
      coalesce: 'coalesce(properties.price, properties.s, event)',
      ifNull: 'ifNull(properties.price, 0)',
      if: "if(properties.flag = 'true', timestamp, now())",
      multiIf: "multiIf(event = 'a', 'x', event = 'signup', properties.$browser, null)",
      isNull: 'isNull(properties.nullish)',
      isNotNull: 'isNotNull(person.properties.email)',
      round: 'round(properties.price, 1)',
      floor: 'floor(properties.price)',
      ceil: 'ceil(1.2)',
      abs: 'abs(0 - properties.price)',
      sqrt: 'sqrt(properties.price)',
      JSONExtractString: "JSONExtractString(properties, '$browser')",
      JSONExtractRaw: "JSONExtractRaw(properties, 'list', 1)",
      JSONExtractInt: "JSONExtractInt(properties, 'price')",
      JSONExtractFloat: "JSONExtractFloat(person.properties, 'x')",
      JSONExtractBool: "JSONExtractBool(properties, 'flag')",
      JSONHas: "JSONHas(properties, 'price')",
      JSONLength: "JSONLength(properties, 'list')",
      and: 'and(1, properties.price > 1, null)',
      or: "or(event = 'a', 0)",
      not: 'not(properties.flag is null)',
      equals: 'equals(properties.price, 10)',
      notEquals: "notEquals(timestamp, '2024-01-10')",
      less: 'less(properties.price, 7)',
      lessOrEquals: "lessOrEquals(toDate(timestamp), '2024-01-12')",
      greater: "greater(person_id, '00000000-0000-4000-8000-0000000000a1')",
      greaterOrEquals: 'greaterOrEquals(properties.price, properties.s)',
      plus: 'plus(properties.price, 1)',
      minus: 'minus(timestamp, interval 1 day)',
      multiply: 'multiply(2, 3.5)',
      divide: 'divide(properties.price, 0)',
      modulo: 'modulo(properties.price, 0)',
    };
    const names = hogqlFunctionNames();
    expect(Object.keys(samples).sort()).toEqual([...names.aggregates, ...names.functions].sort());
    for (const [name, expression] of Object.entries(samples)) {
      const params = new QueryParams();
      const select = await compiler.compileSelect([expression], params);
      const sql = `SELECT ${select.columns[0].sql} AS c0 FROM ${events.table} WHERE team_id = {team:Int64}`;
      await expect(events.query(sql, { ...params.values, team: 1 }).then(() => name)).resolves.toBe(name);
    }
  });
});

describe('regex checks agree with ClickHouse', () => {
  const patterns = [
    'abc',
    '^a.*b$',
    '(?i)abc',
    '(?P<name>x)',
    '(?<name>x)',
    '[[:alpha:]]+',
    '[[:^digit:]]',
    '\\d+\\s\\w',
    '\\pL',
    '\\p{Greek}',
    '\\PN',
    'a{2,3}',
    'a{,3}',
    'a{2}?',
    'x*?',
    'x+?',
    'x??',
    '\\Qa.b\\E',
    '\\Qab',
    '[]a]',
    '[^]a]',
    '[a-]',
    '[-a]',
    '\\x41',
    '\\x{263a}',
    '\\101',
    '\\0',
    '(?s:.)',
    '(?i-s:a)',
    'a|b|',
    '()',
    '^*',
    '\\b',
    '\\.',
    '\\-',
    '\\/',
    'é+',
    '(?i)(?s)x',
    'a{1000}',
    '\\z',
    '\\A',
    '\\C',
    '[\\d]',
    '[\\pL]',
    'a{',
    'a{1',
    'a{1,',
    '{',
    '}',
    ']',
    'a$',
    '(?U)a*',
    '[a-z0-9_.-]+@',
    '(a)(?:b)(?P<c>c)',
    'a*(?i)*',
    '(',
    ')',
    '[',
    'a**',
    'a++',
    'a*+',
    '*a',
    '+',
    '?',
    '|*',
    '(*)',
    '(?=a)',
    '(?!a)',
    '(?<=a)',
    '(?<!a)',
    '\\1',
    '\\8',
    '\\Z',
    '\\e',
    '\\q',
    '\\E',
    'a{1001}',
    'a{3,2}',
    'a{2}{3}',
    '[z-a]',
    '[[:foo:]]',
    '(?P<n>a)(?P<n>b)',
    '(?)',
    '(?i-)',
    '(?x)',
    '\\',
    'a\\',
    '\\p{',
    '\\pé',
    '(?#comment)',
    '(?>a)',
    '[a',
    '[\\b]',
    '\\x4',
    '\\x{}',
    '\\x{110000}',
    '[a-\\d]',
    '(?P<>a)',
    '(?P=n)',
    '\\é',
  ];

  // ClickHouse skips RE2 for patterns it takes for plain text and then matches them oddly (`)`
  // matches everything); these are refused up front instead.
  const stricter = new Set([')', '(?)', '\\', 'a\\']);

  it.each(patterns.filter((pattern) => !stricter.has(pattern)))('%s', async (pattern) => {
    const accepted = re2SyntaxError(pattern) === undefined;
    const clickHouseAccepts = await events
      .query("SELECT match('', {pattern:String}) AS m", { pattern })
      .then(() => true)
      .catch((error: unknown) => {
        if ((error as { type?: string }).type === 'CANNOT_COMPILE_REGEXP') return false;
        throw error;
      });
    expect(accepted).toBe(clickHouseAccepts);
  });

  it.each([...stricter])('refuses %s, which RE2 would not compile', (pattern) => {
    expect(re2SyntaxError(pattern)).toBeDefined();
  });
});

describe('generated expressions run in ClickHouse', () => {
  it('compiles 400 random valid-shaped expressions to SQL that runs, or refuses them', async () => {
    const random = seededRandom(20240210);
    let ran = 0;
    for (let index = 0; index < 400; index += 1) {
      const expression = generateExpression(random);
      const params = new QueryParams();
      let sql: string;
      let where: string | null;
      try {
        const select = await compiler.compileSelect([expression], params);
        sql = select.columns[0].sql;
        where = null;
        if (!select.hasAggregation) {
          where = (await compiler.compileWhere([expression], params).catch(() => ({ sql: null }))).sql;
        }
      } catch (error) {
        if (error instanceof HogQLError) continue;
        throw error;
      }
      const query =
        `SELECT ${sql} AS c0 FROM ${events.table} WHERE team_id = {team:Int64}` +
        (where ? ` AND ${where}` : '');
      try {
        await events.query(query, { ...params.values, team: 1 });
        ran += 1;
      } catch (error) {
        // Whatever still fails in ClickHouse must at least be a user error (a 400), not a 500.
        if (!hogqlErrorFromClickHouse(error)) {
          throw new Error(`${expression}\n${query}\n${(error as Error).message}`, { cause: error });
        }
      }
    }
    expect(ran).toBeGreaterThan(100);
  });

  it('compiles 400 random property filters to SQL that runs, or refuses them', async () => {
    const random = seededRandom(777);
    let ran = 0;
    for (let index = 0; index < 400; index += 1) {
      const filters = generatePropertyFilter(random);
      const params = new QueryParams();
      let condition: string | null;
      try {
        condition = await compilePropertyFilters(filters, params, { now: NOW, compiler });
      } catch (error) {
        if (error instanceof HogQLError) continue;
        throw error;
      }
      const query = `SELECT count() AS c FROM ${events.table} WHERE team_id = {team:Int64} AND ${condition ?? '1'}`;
      await events.query(query, { ...params.values, team: 1 }).catch((error: unknown) => {
        throw new Error(`${JSON.stringify(filters)}\n${query}\n${(error as Error).message}`, {
          cause: error,
        });
      });
      ran += 1;
    }
    expect(ran).toBeGreaterThan(100);
  });
});
