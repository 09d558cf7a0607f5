import { HogQLCompiler, parseExpressionListParam } from './hogql-compiler.util';
import { HogQLError } from './hogql.errors';
import { closeSharedHogQLParser } from './hogql-parser.util';
import { QueryParams } from './query-params.util';

const compiler = new HogQLCompiler();

afterAll(async () => {
  await closeSharedHogQLParser();
});

/** The SQL and bound values of one select expression. */
async function select(expression: string): Promise<{ sql: string; params: Record<string, unknown> }> {
  const params = new QueryParams();
  const result = await compiler.compileSelect([expression], params);
  return { sql: result.columns[0].sql, params: { ...params.values } };
}

async function where(expression: string): Promise<{ sql: string; params: Record<string, unknown> }> {
  const params = new QueryParams();
  const result = await compiler.compileWhere([expression], params);
  return { sql: result.sql!, params: { ...params.values } };
}

async function selectError(expression: string): Promise<HogQLError> {
  return compiler.compileSelect([expression], new QueryParams()).then(
    () => {
      throw new Error(`expected ${expression} to be refused`);
    },
    (error: unknown) => {
      if (!(error instanceof HogQLError)) throw error;
      return error;
    },
  );
}

async function whereError(expression: string): Promise<HogQLError> {
  return compiler.compileWhere([expression], new QueryParams()).then(
    () => {
      throw new Error(`expected ${expression} to be refused`);
    },
    (error: unknown) => {
      if (!(error instanceof HogQLError)) throw error;
      return error;
    },
  );
}

const property = (column: string, ...keys: string[]) =>
  `JSONExtract(${column}, ${keys.map((_, index) => `{p${index}:String}`).join(', ')}, 'Nullable(String)')`;

describe('fields', () => {
  it.each([
    ['event', 'event'],
    ['uuid', 'uuid'],
    ['id', 'uuid'],
    ['distinct_id', 'distinct_id'],
    ['timestamp', 'timestamp'],
    ['created_at', 'created_at'],
    ['elements_chain', 'elements_chain'],
    ['properties', 'properties'],
    ['person_id', 'person_id'],
    ['person_created_at', 'person_created_at'],
    ['person_properties', 'person_properties'],
    ['person.id', 'person_id'],
    ['person.created_at', 'person_created_at'],
    ['person.properties', 'person_properties'],
    ['$group_0', '`$group_0`'],
    ['$group_1', '`$group_1`'],
    ['$group_2', '`$group_2`'],
    ['$group_3', '`$group_3`'],
    ['$group_4', '`$group_4`'],
    ['`event`', 'event'],
    ['"distinct_id"', 'distinct_id'],
  ])('reads %s as the column %s', async (expression, sql) => {
    expect(await select(expression)).toEqual({ sql, params: {} });
  });

  it('reads a property as nullable text, its key bound', async () => {
    expect(await select('properties.$browser')).toEqual({
      sql: property('properties', '$browser'),
      params: { p0: '$browser' },
    });
  });

  it('reads nested properties with one key per level', async () => {
    expect(await select('properties.a.b.c')).toEqual({
      sql: property('properties', 'a', 'b', 'c'),
      params: { p0: 'a', p1: 'b', p2: 'c' },
    });
  });

  it.each([
    ["properties['$current url']", ['$current url']],
    ['properties.`a b`', ['a b']],
    ["properties['a']['b'].c", ['a', 'b', 'c']],
    ["properties['''); DROP TABLE events; --']", ["'); DROP TABLE events; --"]],
    ['properties.__proto__', ['__proto__']],
  ])('reads %s with the keys bound', async (expression, keys) => {
    const { sql, params } = await select(expression);
    expect(sql).toBe(property('properties', ...keys));
    expect(Object.values(params)).toEqual(keys);
  });

  it('reads person properties from person_properties', async () => {
    expect(await select('person.properties.email')).toEqual({
      sql: property('person_properties', 'email'),
      params: { p0: 'email' },
    });
  });

  it('refuses a property path deeper than 10 keys', async () => {
    const error = await selectError(`properties.${Array.from({ length: 11 }, () => 'a').join('.')}`);
    expect(error.kind).toBe('limit');
  });

  it.each([
    ['team_id', 'team_id cannot be selected or filtered on'],
    ['team_id = 2', 'team_id cannot be selected or filtered on'],
    ['`team_id`', 'team_id cannot be selected or filtered on'],
    ['events.team_id', 'team_id cannot be selected or filtered on'],
    ['e.team_id', 'team_id cannot be selected or filtered on'],
    ['_timestamp', '_timestamp is internal'],
    ['_offset', '_offset is internal'],
    ['TEAM_ID', 'Unknown field: "TEAM_ID"'],
    ['foo', 'Unknown field: "foo"'],
    ['Event', 'Unknown field: "Event"'],
    ['person.name', 'Unknown field: "person.name"'],
    ['person.properties.x.y.z = 1 or person.foo', 'Unknown field: "person.foo"'],
    ['event.length', 'Unknown field: "event.length"'],
    ['constructor', 'Unknown field: "constructor"'],
    ['__proto__', 'Unknown field: "__proto__"'],
    ['toString', 'Unknown field: "toString"'],
    ['$group_5', 'Unknown field: "$group_5"'],
    ['events.event', 'Unknown field: "events.event"'],
    ['properties[1]', 'Only properties can be indexed'],
    ['properties[event]', 'Only properties can be indexed'],
    ['event[1]', 'Only properties can be indexed'],
    ['person = 1', 'person is only allowed on its own'],
    ['lower(*)', '* is only allowed on its own'],
    ['properties.*', '* is only allowed on its own'],
  ])('refuses %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(error.message).toContain(message);
    expect(error.attr).toBe('select');
    expect(error.kind).toBe('unsupported');
  });

  it('never puts team_id in the SQL, even as a property key', async () => {
    const { sql, params } = await select('properties.team_id');
    expect(sql).not.toContain('team_id');
    expect(params).toEqual({ p0: 'team_id' });
  });
});

describe('literals', () => {
  it.each([
    ["'Chrome'", '{p0:String}', { p0: 'Chrome' }],
    ["'it''s'", '{p0:String}', { p0: "it's" }],
    ["'a\\'b\\\\c\\nd'", '{p0:String}', { p0: "a'b\\c\nd" }],
    ["'é💥'", '{p0:String}', { p0: 'é💥' }],
    ['42', '{p0:Int64}', { p0: 42 }],
    ['-7', '{p0:Int64}', { p0: -7 }],
    ['0x1F', '{p0:Int64}', { p0: 31 }],
    ['9007199254740991', '{p0:Int64}', { p0: 9007199254740991 }],
    ['1.5', '{p0:Float64}', { p0: 1.5 }],
    ['1e3', '{p0:Float64}', { p0: 1000 }],
    ['2.0', '{p0:Float64}', { p0: 2 }],
    ['true', 'true', {}],
    ['FALSE', 'false', {}],
    ['null', 'NULL', {}],
  ])('binds %s as %s', async (expression, sql, params) => {
    expect(await select(expression)).toEqual({ sql, params });
  });

  it.each([
    '9007199254740993',
    '99999999999999999999',
    '-9223372036854775809',
    'inf',
    '-inf',
    'nan',
    '1e400',
  ])('refuses the out-of-range number %s', async (expression) => {
    const error = await selectError(expression);
    expect(error.kind).toBe('value');
    expect(error.message).toMatch(/out of range/);
  });
});

describe('comparisons', () => {
  const browser = property('properties', '$browser');

  it.each([
    ["event = 'a'", 'equals(event, {p0:String})'],
    ["event == 'a'", 'equals(event, {p0:String})'],
    ["event != 'a'", 'notEquals(event, {p0:String})'],
    ["event <> 'a'", 'notEquals(event, {p0:String})'],
    ["event < 'a'", 'less(event, {p0:String})'],
    ["event <= 'a'", 'lessOrEquals(event, {p0:String})'],
    ["event > 'a'", 'greater(event, {p0:String})'],
    ["event >= 'a'", 'greaterOrEquals(event, {p0:String})'],
    ["'a' = event", 'equals({p0:String}, event)'],
    ['event = distinct_id', 'equals(event, distinct_id)'],
  ])('%s', async (expression, sql) => {
    expect((await where(expression)).sql).toBe(sql);
  });

  it.each([
    ["properties.$browser = 'Chrome'", `ifNull(equals(${browser}, {p1:String}), 0)`],
    ["properties.$browser != 'Chrome'", `ifNull(notEquals(${browser}, {p1:String}), 1)`],
    ["properties.$browser < 'Chrome'", `ifNull(less(${browser}, {p1:String}), 0)`],
    ["properties.$browser >= 'Chrome'", `ifNull(greaterOrEquals(${browser}, {p1:String}), 0)`],
  ])('%s follows PostHog: a missing property never equals, always differs', async (expression, sql) => {
    expect(await where(expression)).toEqual({ sql, params: { p0: '$browser', p1: 'Chrome' } });
  });

  it('compares two nullable sides without losing NULL = NULL', async () => {
    const a = property('properties', 'a').replace('{p0:String}', '{p0:String}');
    const b = property('properties', 'b').replace('{p0:String}', '{p1:String}');
    expect((await where('properties.a = properties.b')).sql).toBe(
      `ifNull(equals(${a}, ${b}), and(isNull(${a}), isNull(${b})))`,
    );
    expect((await where('properties.a != properties.b')).sql).toBe(
      `ifNull(notEquals(${a}, ${b}), or(isNotNull(${a}), isNotNull(${b})))`,
    );
  });

  it.each([
    [
      'properties.price > 5',
      `ifNull(greater(toFloat64OrNull(${property('properties', 'price')}), {p1:Int64}), 0)`,
    ],
    [
      'properties.price = 5.5',
      `ifNull(equals(toFloat64OrNull(${property('properties', 'price')}), {p1:Float64}), 0)`,
    ],
    ['count() > properties.price', null],
  ])('reads a property as a number when compared with one: %s', async (expression, sql) => {
    if (sql === null) {
      expect((await select(expression)).sql).toContain('greater(count(), toFloat64OrNull(');
      return;
    }
    expect((await where(expression)).sql).toBe(sql);
  });

  it('compares a property with a boolean as its text', async () => {
    expect(await where('properties.flag = true')).toEqual({
      sql: `ifNull(equals(${property('properties', 'flag')}, {p1:String}), 0)`,
      params: { p0: 'flag', p1: 'true' },
    });
  });

  it.each([
    ['properties.a is null', `isNull(${property('properties', 'a')})`],
    ['properties.a is not null', `isNotNull(${property('properties', 'a')})`],
    ['properties.a = null', `isNull(${property('properties', 'a')})`],
    ['null != properties.a', `isNotNull(${property('properties', 'a')})`],
    ['properties.a < null', '0'],
    ['null = null', '1'],
    ['null != null', '0'],
  ])('%s', async (expression, sql) => {
    expect((await where(expression)).sql).toBe(sql);
  });

  it.each([
    ["timestamp > '2024-01-31'", '2024-01-31 00:00:00.000000'],
    ["timestamp > '2024-01-31T10:20:30Z'", '2024-01-31 10:20:30.000000'],
    ["timestamp > '2024-01-31 10:20:30.123456'", '2024-01-31 10:20:30.123456'],
    ["timestamp > '2024-01-31T10:20:30+02:00'", '2024-01-31 08:20:30.000000'],
  ])('parses the date-time literal of %s', async (expression, value) => {
    expect(await where(expression)).toEqual({
      sql: "greater(timestamp, toDateTime64({p0:String}, 6, 'UTC'))",
      params: { p0: value },
    });
  });

  it('compares a date with a date literal', async () => {
    expect(await where("toDate(timestamp) = '2024-01-31'")).toEqual({
      sql: 'equals(toDate(timestamp), toDate({p0:String}))',
      params: { p0: '2024-01-31' },
    });
  });

  it('widens a date compared with a date-time literal', async () => {
    expect((await where("toDate(timestamp) < '2024-01-31T12:00:00Z'")).sql).toBe(
      "less(toDateTime64(toDate(timestamp), 6, 'UTC'), toDateTime64({p0:String}, 6, 'UTC'))",
    );
  });

  it('parses a property compared with a date-time', async () => {
    expect((await where('properties.d > timestamp')).sql).toBe(
      `ifNull(greater(parseDateTime64BestEffortOrNull(${property('properties', 'd')}, 6, 'UTC'), timestamp), 0)`,
    );
  });

  it('binds a UUID literal through toUUID', async () => {
    expect(await where("person_id = '0190E2A4-0000-7000-8000-000000000000'")).toEqual({
      sql: 'equals(person_id, toUUID({p0:String}))',
      params: { p0: '0190E2A4-0000-7000-8000-000000000000' },
    });
  });

  it('compares a UUID with a string column as text', async () => {
    expect((await where('uuid = distinct_id')).sql).toBe('equals(toString(uuid), distinct_id)');
  });

  it.each([
    ["timestamp > 'yesterday'", 'Not a date or date-time'],
    ["timestamp = '2024-02-30'", 'Not a date or date-time'],
    ["timestamp = '1800-01-01'", 'Not a date or date-time'],
    ["person_id = 'not-a-uuid'", 'Not a UUID'],
    ["uuid in ('0190e2a4-0000-7000-8000-000000000000', 'x')", 'Not a UUID'],
  ])('refuses the literal in %s', async (expression, message) => {
    const error = await whereError(expression);
    expect(error.kind).toBe('value');
    expect(error.message).toContain(message);
  });

  it.each([
    ['event = 5', 'Cannot combine a string and a number in a comparison'],
    ["count() > '5'", null],
    ['timestamp > 5', 'Cannot combine a date-time and a number'],
    ['timestamp = event', 'Cannot combine a date-time and a string'],
    ['person_id = 5', 'Cannot combine a UUID and a number'],
    ['uuid = true', 'Cannot combine a UUID and a boolean'],
    ['interval 1 day = interval 2 day', 'Intervals cannot be compared'],
  ])('refuses mismatched types in %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(error.kind).toBe('type');
    if (message) expect(error.message).toContain(message);
  });
});

describe('pattern operators', () => {
  it.each([
    ["event like 'a%'", 'like(event, {p0:String})', 'a%'],
    ["event ilike 'a%'", 'ilike(event, {p0:String})', 'a%'],
    ["event not like 'a%'", 'notLike(event, {p0:String})', 'a%'],
    ["event not ilike 'a%'", 'notILike(event, {p0:String})', 'a%'],
    ["event =~ '^a'", 'match(event, {p0:String})', '^a'],
    ["event =~* '^a'", 'match(event, {p0:String})', '(?i)^a'],
    ["event !~ '^a'", 'not(match(event, {p0:String}))', '^a'],
    ["event !~* '^a'", 'not(match(event, {p0:String}))', '(?i)^a'],
    ["uuid like '0190%'", 'like(toString(uuid), {p0:String})', '0190%'],
  ])('%s', async (expression, sql, pattern) => {
    expect(await where(expression)).toEqual({ sql, params: { p0: pattern } });
  });

  it.each([
    ["properties.a like 'x'", 'ifNull(like(P, {p1:String}), 0)'],
    ["properties.a not like 'x'", 'ifNull(notLike(P, {p1:String}), 1)'],
    ["properties.a =~ 'x'", 'ifNull(match(P, {p1:String}), 0)'],
    ["properties.a !~ 'x'", 'ifNull(not(match(P, {p1:String})), 1)'],
  ])('%s treats a missing property as not matching', async (expression, sql) => {
    expect((await where(expression)).sql).toBe(sql.replace('P', property('properties', 'a')));
  });

  it.each([
    ["event =~ '('", 'Invalid regular expression "(" (missing ))'],
    ["event =~ '(?=a)'", 'lookahead is not supported'],
    ["event !~ 'a**'", 'bad repetition operator'],
    ["event =~* '\\\\1'", 'invalid escape sequence'],
    ["match(event, '[z-a]')", 'bad character class range'],
    ["extract(event, 'a{1001}')", 'bad repetition operator'],
    ["event like 'a\\\\'", 'ends with an unescaped backslash'],
  ])('refuses the bad pattern in %s', async (expression, message) => {
    const error = await whereError(expression);
    expect(error.kind).toBe('value');
    expect(error.message).toContain(message);
  });

  it.each(['event like distinct_id', 'event =~ distinct_id', "event ilike concat('a', '%')"])(
    'refuses a pattern that is not a literal: %s',
    async (expression) => {
      expect((await whereError(expression)).message).toContain('takes a literal string here');
    },
  );
});

describe('IN', () => {
  it.each([
    ["event in ('a', 'b')", 'in(event, tuple({p0:String}, {p1:String}))', { p0: 'a', p1: 'b' }],
    ["event not in ('a')", 'notIn(event, tuple({p0:String}))', { p0: 'a' }],
    ["event in ['a']", 'in(event, tuple({p0:String}))', { p0: 'a' }],
    ["event in 'a'", 'in(event, tuple({p0:String}))', { p0: 'a' }],
    [
      'properties.n in (1, 2.5)',
      `ifNull(in(toFloat64OrNull(${property('properties', 'n')}), tuple({p1:Int64}, {p2:Float64})), 0)`,
      { p0: 'n', p1: 1, p2: 2.5 },
    ],
    [
      "properties.b not in ('x')",
      `ifNull(notIn(${property('properties', 'b')}, tuple({p1:String})), 1)`,
      { p0: 'b', p1: 'x' },
    ],
    [
      "timestamp in ('2024-01-01')",
      "in(timestamp, tuple(toDateTime64({p0:String}, 6, 'UTC')))",
      { p0: '2024-01-01 00:00:00.000000' },
    ],
    ['event in []', '0', {}],
    ['event not in []', '1', {}],
  ])('%s', async (expression, sql, params) => {
    expect(await where(expression)).toEqual({ sql, params });
  });

  it.each([
    ["event in ('a', 1)", 'cannot mix strings and numbers'],
    ["event in ('a', null)", 'use IS NULL'],
    ['event in (distinct_id)', 'IN takes a list of literals'],
    ['event in (distinct_id, event)', 'may only hold literals'],
    ['event in (select event from events)', 'IN takes a list of literals'],
    ['event in cohort 5', 'Cohorts are not supported'],
    ['person_id not in cohort 5', 'Cohorts are not supported'],
  ])('refuses %s', async (expression, message) => {
    expect((await whereError(expression)).message).toContain(message);
  });
});

describe('logic and arithmetic', () => {
  it.each([
    [
      "event = 'a' and distinct_id = 'b'",
      'and(equals(event, {p0:String}), equals(distinct_id, {p1:String}))',
    ],
    [
      "event = 'a' or event = 'b' or event = 'c'",
      'or(equals(event, {p0:String}), equals(event, {p1:String}), equals(event, {p2:String}))',
    ],
    ["not event = 'a'", 'not(equals(event, {p0:String}))'],
    [
      "event = 'a' and (event = 'b' or true)",
      'and(equals(event, {p0:String}), or(equals(event, {p1:String}), true))',
    ],
    ['1', 'notEquals({p0:Int64}, 0)'],
    ['null', 'ifNull(NULL, 0)'],
    [
      "event between 'a' and 'b'",
      'and(greaterOrEquals(event, {p0:String}), lessOrEquals(event, {p1:String}))',
    ],
    [
      "event not between 'a' and 'b'",
      'not(and(greaterOrEquals(event, {p0:String}), lessOrEquals(event, {p1:String})))',
    ],
  ])('%s', async (expression, sql) => {
    expect((await where(expression)).sql).toBe(sql);
  });

  it.each([
    ['1 + 2', 'plus({p0:Int64}, {p1:Int64})'],
    ['1 - 2', 'minus({p0:Int64}, {p1:Int64})'],
    ['2 * 3', 'multiply({p0:Int64}, {p1:Int64})'],
    ['1 / 3', 'divide({p0:Int64}, {p1:Int64})'],
    ['5 % 0', 'moduloOrZero({p0:Int64}, {p1:Int64})'],
    [
      '-properties.n',
      `minus({p0:Int64}, toFloat64OrNull(${property('properties', 'n').replace('p0', 'p1')}))`,
    ],
    ['timestamp + interval 2 hour', 'plus(timestamp, toIntervalHour({p0:Int64}))'],
    ['timestamp - interval 1 day', 'minus(timestamp, toIntervalDay({p0:Int64}))'],
    ['interval 1 week + timestamp', 'plus(timestamp, toIntervalWeek({p0:Int64}))'],
    ['today() - interval 1 month', 'minus(today(), toIntervalMonth({p0:Int64}))'],
    ['true + 1', 'plus(true, {p0:Int64})'],
  ])('%s', async (expression, sql) => {
    expect((await select(expression)).sql).toBe(sql);
  });

  it.each([
    ['event + 1', 'Cannot apply + to a string (convert it with toFloat())'],
    ["'1' * 2", 'Cannot apply * to a string'],
    ['timestamp - timestamp', 'use dateDiff()'],
    ['timestamp * 2', 'Cannot apply * to a date-time and a number'],
    ['uuid + 1', 'Cannot apply + to a UUID'],
    ['interval 1 day - timestamp', 'Cannot apply - to an interval and a date-time'],
  ])('refuses %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(error.kind).toBe('type');
    expect(error.message).toContain(message);
  });

  it.each([
    ['event', 'A string is not a condition'],
    ['properties.flag', 'A property is not a condition'],
    ['timestamp', 'A date-time is not a condition'],
    ['not lower(event)', 'A string is not a condition'],
    ["event = 'a' and uuid", 'A UUID is not a condition'],
  ])('refuses %s as a condition', async (expression, message) => {
    expect((await whereError(expression)).message).toContain(message);
  });
});

describe('functions', () => {
  const P = (key: string, index = 0) =>
    property('properties', key).replace('{p0:String}', `{p${index}:String}`);

  it.each([
    ['count()', 'count()'],
    ['COUNT(*)', 'count()'],
    ['count(distinct_id)', 'count(distinct_id)'],
    ['count(distinct distinct_id)', 'count(DISTINCT distinct_id)'],
    ['total()', 'count()'],
    ["countIf(event = 'a')", 'countIf(equals(event, {p0:String}))'],
    ['uniq(person_id)', 'uniq(person_id)'],
    ['sum(properties.n)', `sum(toFloat64OrNull(${P('n')}))`],
    ['avg(properties.n)', `avg(toFloat64OrNull(${P('n')}))`],
    ['min(timestamp)', 'min(timestamp)'],
    ['max(properties.s)', `max(${P('s')})`],
    ['any(event)', 'any(event)'],
    ['lower(event)', 'lower(event)'],
    ['upper(properties.s)', `upper(${P('s')})`],
    ['length(event)', 'lengthUTF8(event)'],
    ['empty(event)', 'empty(event)'],
    ['notEmpty(event)', 'notEmpty(event)'],
    ['trim(event)', 'trimBoth(event)'],
    ['trimLeft(event)', 'trimLeft(event)'],
    ['trimRight(event)', 'trimRight(event)'],
    ["startsWith(event, '$')", 'startsWith(event, {p0:String})'],
    ["endsWith(event, 'view')", 'endsWith(event, {p0:String})'],
    ["position(event, 'a')", 'positionUTF8(event, {p0:String})'],
    ["concat(event, '-', 1)", "concat(event, {p0:String}, ifNull(toString({p1:Int64}), ''))"],
    ["concat(properties.s, 'x')", `concat(ifNull(toString(${P('s')}), ''), {p1:String})`],
    ["'a' || event", 'concat({p0:String}, event)'],
    ['substring(event, 2)', 'substringUTF8(event, {p0:Int64})'],
    ['substring(event, 2, 3)', 'substringUTF8(event, {p0:Int64}, {p1:Int64})'],
    ["replace(event, 'a', 'b')", 'replaceAll(event, {p0:String}, {p1:String})'],
    ["replaceAll(event, 'a', 'b')", 'replaceAll(event, {p0:String}, {p1:String})'],
    ["replaceOne(event, 'a', 'b')", 'replaceOne(event, {p0:String}, {p1:String})'],
    ["like(event, 'a%')", 'like(event, {p0:String})'],
    ["ilike(event, 'a%')", 'ilike(event, {p0:String})'],
    ["notLike(event, 'a%')", 'notLike(event, {p0:String})'],
    ["notILike(event, 'a%')", 'notILike(event, {p0:String})'],
    ["match(event, '^a')", 'match(event, {p0:String})'],
    ["extract(event, 'a(b)')", 'extract(event, {p0:String})'],
    ['toString(uuid)', 'toString(uuid)'],
    ['toString(event)', 'event'],
    ['toInt(properties.n)', `accurateCastOrNull(${P('n')}, 'Int64')`],
    ["toFloat('1.5')", "accurateCastOrNull({p0:String}, 'Float64')"],
    ['toDate(timestamp)', 'toDate(timestamp)'],
    ['toDate(properties.d)', `toDateOrNull(${P('d')})`],
    ["toDate('2024-01-31')", "toDate(toDateTime64({p0:String}, 6, 'UTC'))"],
    ['toDateTime(properties.d)', `parseDateTime64BestEffortOrNull(${P('d')}, 6, 'UTC')`],
    ["toDateTime('2024-01-31 10:00')", "toDateTime64({p0:String}, 6, 'UTC')"],
    ['toDateTime(toDate(timestamp))', "toDateTime64(toDate(timestamp), 6, 'UTC')"],
    ['toDateTime(1700000000)', "toDateTime64({p0:Int64}, 6, 'UTC')"],
    ['now()', "now64(6, 'UTC')"],
    ['today()', 'today()'],
    ['toStartOfMinute(timestamp)', 'toStartOfMinute(timestamp)'],
    ['toStartOfHour(today())', "toStartOfHour(toDateTime(today(), 'UTC'))"],
    ['toStartOfDay(timestamp)', 'toStartOfDay(timestamp)'],
    ['toStartOfWeek(timestamp)', 'toStartOfWeek(timestamp)'],
    ['toMonday(timestamp)', 'toMonday(timestamp)'],
    ['toStartOfMonth(timestamp)', 'toStartOfMonth(timestamp)'],
    ['toStartOfQuarter(timestamp)', 'toStartOfQuarter(timestamp)'],
    ['toStartOfYear(timestamp)', 'toStartOfYear(timestamp)'],
    ["toStartOfDay('2024-01-31T10:00:00Z')", "toStartOfDay(toDateTime64({p0:String}, 6, 'UTC'))"],
    ['toStartOfDay(properties.d)', `toStartOfDay(parseDateTime64BestEffortOrNull(${P('d')}, 6, 'UTC'))`],
    ['toYear(timestamp)', 'toYear(timestamp)'],
    ['toMonth(timestamp)', 'toMonth(timestamp)'],
    ['toDayOfMonth(timestamp)', 'toDayOfMonth(timestamp)'],
    ['toDayOfWeek(timestamp)', 'toDayOfWeek(timestamp)'],
    ['toHour(timestamp)', 'toHour(timestamp)'],
    ['toMinute(timestamp)', 'toMinute(timestamp)'],
    ['toSecond(timestamp)', 'toSecond(timestamp)'],
    ['toUnixTimestamp(timestamp)', 'toUnixTimestamp(timestamp)'],
    ["dateDiff('day', timestamp, now())", "dateDiff('day', timestamp, now64(6, 'UTC'))"],
    ["dateDiff('Hours', created_at, timestamp)", "dateDiff('hour', created_at, timestamp)"],
    ["dateAdd('day', 2, timestamp)", 'plus(timestamp, toIntervalDay({p0:Int64}))'],
    ["dateSub('month', 1, today())", 'minus(today(), toIntervalMonth({p0:Int64}))'],
    ['toIntervalSecond(5)', 'toIntervalSecond({p0:Int64})'],
    ['toIntervalMinute(5)', 'toIntervalMinute({p0:Int64})'],
    ['toIntervalHour(5)', 'toIntervalHour({p0:Int64})'],
    ['toIntervalDay(5)', 'toIntervalDay({p0:Int64})'],
    ['toIntervalWeek(5)', 'toIntervalWeek({p0:Int64})'],
    ['toIntervalMonth(5)', 'toIntervalMonth({p0:Int64})'],
    ['toIntervalQuarter(5)', 'toIntervalQuarter({p0:Int64})'],
    ['toIntervalYear(5)', 'toIntervalYear({p0:Int64})'],
    ["coalesce(properties.s, event, 'x')", `coalesce(${P('s')}, event, {p1:String})`],
    ['coalesce(properties.n, 0)', `coalesce(toFloat64OrNull(${P('n')}), {p1:Int64})`],
    ["ifNull(properties.s, 'none')", `coalesce(${P('s')}, {p1:String})`],
    ["if(event = 'a', 1, 2)", 'if(equals(event, {p0:String}), {p1:Int64}, {p2:Int64})'],
    ["event = 'a' ? 'x' : 'y'", 'if(equals(event, {p0:String}), {p1:String}, {p2:String})'],
    [
      "multiIf(event = 'a', 1, event = 'b', 2, 3)",
      'multiIf(equals(event, {p0:String}), {p1:Int64}, equals(event, {p2:String}), {p3:Int64}, {p4:Int64})',
    ],
    [
      "case when event = 'a' then 'x' when event = 'b' then 'y' else 'z' end",
      'multiIf(equals(event, {p0:String}), {p1:String}, equals(event, {p2:String}), {p3:String}, {p4:String})',
    ],
    ["case event when 'a' then 1 else 0 end", 'if(equals(event, {p0:String}), {p1:Int64}, {p2:Int64})'],
    ['isNull(properties.s)', `isNull(${P('s')})`],
    ['isNotNull(properties.s)', `isNotNull(${P('s')})`],
    ['round(1.234, 2)', 'round({p0:Float64}, {p1:Int64})'],
    ['round(properties.n)', `round(toFloat64OrNull(${P('n')}))`],
    ['floor(1.5)', 'floor({p0:Float64})'],
    ['ceil(1.5, 1)', 'ceil({p0:Float64}, {p1:Int64})'],
    ['abs(-1)', 'abs({p0:Int64})'],
    ['sqrt(4)', 'sqrt({p0:Int64})'],
    ["JSONExtractString(properties, 'a', 'b')", 'JSONExtractString(properties, {p0:String}, {p1:String})'],
    ["JSONExtractRaw(properties, 'list', 1)", 'JSONExtractRaw(properties, {p0:String}, {p1:Int64})'],
    ["JSONExtractInt(person.properties, 'age')", 'JSONExtractInt(person_properties, {p0:String})'],
    ["JSONExtractFloat(properties, 'n')", 'JSONExtractFloat(properties, {p0:String})'],
    ["JSONExtractBool(properties, 'b')", 'JSONExtractBool(properties, {p0:String})'],
    ["JSONHas(properties, 'b')", 'JSONHas(properties, {p0:String})'],
    ['JSONLength(properties)', 'JSONLength(properties)'],
    ["and(event = 'a', 1)", 'and(equals(event, {p0:String}), notEquals({p1:Int64}, 0))'],
    ["or(event = 'a', false)", 'or(equals(event, {p0:String}), false)'],
    ["not(event = 'a')", 'not(equals(event, {p0:String}))'],
    ["equals(event, 'a')", 'equals(event, {p0:String})'],
    ["notEquals(event, 'a')", 'notEquals(event, {p0:String})'],
    ['less(1, 2)', 'less({p0:Int64}, {p1:Int64})'],
    ['lessOrEquals(1, 2)', 'lessOrEquals({p0:Int64}, {p1:Int64})'],
    ['greater(1, 2)', 'greater({p0:Int64}, {p1:Int64})'],
    ['greaterOrEquals(1, 2)', 'greaterOrEquals({p0:Int64}, {p1:Int64})'],
    ['plus(1, 2)', 'plus({p0:Int64}, {p1:Int64})'],
    ['minus(1, 2)', 'minus({p0:Int64}, {p1:Int64})'],
    ['multiply(1, 2)', 'multiply({p0:Int64}, {p1:Int64})'],
    ['divide(1, 2)', 'divide({p0:Int64}, {p1:Int64})'],
    ['modulo(1, 2)', 'moduloOrZero({p0:Int64}, {p1:Int64})'],
  ])('%s', async (expression, sql) => {
    expect((await select(expression)).sql).toBe(sql);
  });

  it.each([
    ['lower()', 'lower() takes 1 argument, not 0'],
    ['lower(event, event)', 'lower() takes 1 argument, not 2'],
    ['substring(event)', 'substring() takes 2 to 3 arguments, not 1'],
    ['if(1, 2)', 'if() takes 3 arguments, not 2'],
    ['multiIf(1, 2, 3, 4)', 'condition/value pairs and a default'],
    ['now(1)', 'now() takes 0 arguments, not 1'],
    ['concat()', 'concat() takes at least 1 arguments, not 0'],
  ])('checks the arity of %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(error.kind).toBe('syntax');
    expect(error.message).toContain(message);
  });

  it.each([
    ['lower(1)', 'lower() takes a string, not a number (convert it with toString())'],
    ['length(timestamp)', 'length() takes a string, not a date-time'],
    ['sum(event)', 'sum() takes a number, not a string (convert it with toFloat())'],
    ['round(uuid)', 'round() takes a number, not a UUID'],
    ['toStartOfDay(1)', 'toStartOfDay() takes a date or date-time, not a number'],
    ["toStartOfDay('today')", 'Not a date or date-time'],
    ['toInt(timestamp)', 'toInt() cannot take a datetime'],
    ['toDate(1)', 'toDate() cannot take a number'],
    ['toDateTime(uuid)', 'toDateTime() cannot take an uuid'],
    ['substring(event, properties.n)', 'substring() takes a literal integer here'],
    ['round(1.5, 1.5)', 'round() takes a literal integer here'],
    ["replace(event, event, 'b')", 'replace() takes a literal string here'],
    ["dateDiff('fortnight', timestamp, now())", 'dateDiff() takes a unit among second, minute'],
    ['dateDiff(unit, timestamp, now())', 'dateDiff() takes a literal string here'],
    ["if(event = 'a', 'x', 1)", 'Cannot combine a string and a number in the branches of if()'],
    ['coalesce(timestamp, 1)', 'Cannot combine a date-time and a number in the arguments of coalesce()'],
    ['JSONExtractString(properties, event)', 'JSONExtractString() takes a literal string here'],
    ['concat(interval 1 day)', 'concat() cannot take an interval'],
    ['if(event, 1, 2)', 'A string is not a condition'],
  ])('checks the argument types of %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(['type', 'value']).toContain(error.kind);
    expect(error.message).toContain(message);
  });

  it.each([
    ['sleep(3)', 'Unknown or disallowed function sleep()'],
    ["file('/etc/passwd')", 'Unknown or disallowed function file()'],
    ["url('http://x')", 'Unknown or disallowed function url()'],
    ["remote('h', 'db', 't')", 'Unknown or disallowed function remote()'],
    ["repeat('a', 1000000000)", 'Unknown or disallowed function repeat()'],
    ["dictGet('d', 'a', 1)", 'Unknown or disallowed function dictGet()'],
    ['arrayJoin([1])', 'Unknown or disallowed function arrayJoin()'],
    ['hasOwnProperty(1)', 'Unknown or disallowed function hasOwnProperty()'],
    ['quantile(0.5)(properties.n)', 'Parametric functions'],
    ['sum(properties.n) filter (where 1)', 'FILTER (WHERE …) is not supported'],
    ['count() over (partition by event)', 'Window functions are not allowed'],
    ['sum(distinct properties.n)', 'DISTINCT is only supported in count(DISTINCT …)'],
    ['sum(count())', 'Aggregation count() cannot be nested inside sum()'],
    ['max(min(timestamp))', 'Aggregation min() cannot be nested inside max()'],
    ['event.lower()', 'Calling an expression is not allowed'],
  ])('refuses %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(error.message).toContain(message);
    expect(error.attr).toBe('select');
  });

  it('matches function names case-insensitively and prints the canonical name', async () => {
    expect((await select('LOWER(event)')).sql).toBe('lower(event)');
    expect((await select('Count()')).sql).toBe('count()');
  });

  it.each(['count()', "countIf(event = 'a') > 1", 'sum(properties.n) = 0', 'max(timestamp) > now()'])(
    'refuses the aggregate in where: %s',
    async (expression) => {
      const error = await whereError(expression);
      expect(error.message).toContain('are only allowed in select');
      expect(error.attr).toBe('where');
    },
  );
});

describe('rejected constructs', () => {
  it.each([
    ['(select 1)', 'Subqueries are not allowed'],
    ['event in (select event from events)', 'IN takes a list of literals'],
    ['exists(select 1)', 'Unknown or disallowed function exists()'],
    ['x -> x', 'Lambdas are not allowed'],
    ['{placeholder}', 'Placeholders are not allowed'],
    ['event::String', 'Type casts (::) are not allowed'],
    ['[1, 2]', 'Arrays are only allowed as the list of IN'],
    ['(1, 2)', 'Tuples are only allowed as the list of IN'],
    ["{'a': 1}", 'Dictionaries are not allowed'],
    ["columns('.*')", 'COLUMNS() is not allowed'],
    ['event.1', 'Tuple access is not allowed'],
    ['event is distinct from distinct_id', 'IS DISTINCT FROM is not supported'],
    ['lower(event as e)', 'Aliases (AS) are only allowed around a whole select expression'],
    ['event -- comment', 'Comments are not allowed'],
    ['event /* comment */', 'Comments are not allowed'],
    ['event // comment', 'Comments are not allowed'],
    ['event # comment', 'Comments are not allowed'],
    ["f'{team_id}'", 'Template strings are not allowed'],
    ['1; DROP TABLE events', 'Syntax error in "1; DROP TABLE events"'],
    ["event = 'x'; DROP TABLE events; --", 'Comments are not allowed'],
    ["event = 'x' UNION ALL SELECT 1", 'Syntax error'],
    ['event SETTINGS max_threads = 1', 'Syntax error'],
    ['event FORMAT JSON', 'Syntax error'],
    ["'unterminated", 'Unterminated quoted text'],
    ['event ==== 1', 'Syntax error'],
    ['', 'Empty expression'],
    ['   ', 'Empty expression'],
  ])('refuses %s', async (expression, message) => {
    const error = await selectError(expression);
    expect(error.message).toContain(message);
    expect(error.attr).toBe('select');
  });

  it('names the offending part and the whole expression', async () => {
    const error = await whereError("event = 'a' and sleep(3) = 0");
    expect(error.message).toBe(
      'Unknown or disallowed function sleep(): "sleep(3)" in "event = \'a\' and sleep(3) = 0"',
    );
    expect(error.expression).toBe('sleep(3)');
  });

  it('refuses an expression that is not a string', async () => {
    const error = await compiler.compileWhere([42], new QueryParams()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HogQLError);
    expect((error as HogQLError).message).toBe('Each where expression must be a string, got 42');
  });
});

describe('select', () => {
  it('labels each column with the text as written and gives it a safe alias', async () => {
    const params = new QueryParams();
    const result = await compiler.compileSelect(
      ['event', 'lower(event) AS event', 'properties.$browser as b'],
      params,
    );
    expect(result.columns).toEqual([
      {
        label: 'event',
        alias: null,
        sql: 'event',
        columnAlias: 'c0',
        kind: 'expression',
        isAggregation: false,
      },
      {
        label: 'lower(event) AS event',
        alias: 'event',
        sql: 'lower(event)',
        columnAlias: 'c1',
        kind: 'expression',
        isAggregation: false,
      },
      {
        label: 'properties.$browser as b',
        alias: 'b',
        sql: property('properties', '$browser'),
        columnAlias: 'c2',
        kind: 'expression',
        isAggregation: false,
      },
    ]);
    expect(result).toMatchObject({ hasAggregation: false, groupBy: [] });
  });

  it('groups by the other columns when one aggregates, as PostHog did', async () => {
    const params = new QueryParams();
    const result = await compiler.compileSelect(
      ['event', 'count()', 'toStartOfDay(timestamp)', 'sum(properties.n) + 1'],
      params,
    );
    expect(result.hasAggregation).toBe(true);
    expect(result.columns.map((column) => column.isAggregation)).toEqual([false, true, false, true]);
    expect(result.groupBy).toEqual(['event', 'toStartOfDay(timestamp)']);
  });

  it('selects * as a tuple of the event columns without team_id', async () => {
    const result = await compiler.compileSelect(['*'], new QueryParams());
    expect(result.columns[0]).toMatchObject({
      kind: 'star',
      label: '*',
      sql: 'tuple(uuid, event, properties, timestamp, distinct_id, elements_chain, created_at, person_id, person_created_at, person_properties)',
    });
  });

  it('treats an empty select as *', async () => {
    const result = await compiler.compileSelect([], new QueryParams());
    expect(result.columns.map((column) => column.kind)).toEqual(['star']);
  });

  it('selects person as the tuple PostHog returned', async () => {
    const params = new QueryParams();
    const result = await compiler.compileSelect(['person'], params);
    expect(result.columns[0]).toMatchObject({
      kind: 'person',
      sql: `tuple(distinct_id, person_id, person_created_at, ${property('person_properties', 'name')}, ${property('person_properties', 'email').replace('p0', 'p1')})`,
    });
    expect(params.values).toEqual({ p0: 'name', p1: 'email' });
  });

  it('numbers parameters across columns and compile calls sharing the QueryParams', async () => {
    const params = new QueryParams({ prefix: 'hq' });
    const selected = await compiler.compileSelect(["concat(event, 'a')", "'b'"], params);
    const filtered = await compiler.compileWhere(["event = 'c'"], params);
    expect(selected.columns.map((column) => column.sql)).toEqual([
      'concat(event, {hq0:String})',
      '{hq1:String}',
    ]);
    expect(filtered.sql).toBe('equals(event, {hq2:String})');
    expect(params.values).toEqual({ hq0: 'a', hq1: 'b', hq2: 'c' });
  });
});

describe('where', () => {
  it('ands the expressions', async () => {
    const result = await compiler.compileWhere(["event = 'a'", 'properties.n > 1'], new QueryParams());
    expect(result.conditions).toEqual([
      'equals(event, {p0:String})',
      `ifNull(greater(toFloat64OrNull(${property('properties', 'n').replace('p0', 'p1')}), {p2:Int64}), 0)`,
    ]);
    expect(result.sql).toBe(`and(${result.conditions.join(', ')})`);
  });

  it('gives no SQL for no expressions', async () => {
    expect(await compiler.compileWhere([], new QueryParams())).toEqual({ conditions: [], sql: null });
  });

  it('keeps a nullable condition false when NULL', async () => {
    expect((await where('properties.n > 1 or properties.m = 1 or null')).sql).toMatch(
      /^ifNull\(or\(.*\), 0\)$/,
    );
  });
});

describe('limits', () => {
  it('refuses more expressions than allowed', async () => {
    const small = new HogQLCompiler({ limits: { maxExpressions: 2 } });
    const error = await small
      .compileSelect(['event', 'event', 'event'], new QueryParams())
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      kind: 'limit',
      attr: 'select',
      message: 'At most 2 expressions are allowed in select',
    });
  });

  it('refuses a long expression', async () => {
    const error = await selectError(`event = '${'x'.repeat(4_000)}'`);
    expect(error.kind).toBe('limit');
    expect(error.message).toMatch(/^Expression ".*…" is longer than 4000 characters$/);
  });

  it('refuses deep nesting before parsing it', async () => {
    const error = await selectError(`${'lower('.repeat(13)}event${')'.repeat(13)}`);
    expect(error).toMatchObject({ kind: 'limit' });
    expect(error.message).toContain('Nesting deeper than 12 levels');
  });

  it('counts brackets inside strings as text, not nesting', async () => {
    const { params } = await select(`'${'('.repeat(50)}'`);
    expect(params).toEqual({ p0: '('.repeat(50) });
  });

  it('refuses too many tokens', async () => {
    const error = await selectError(Array.from({ length: 400 }, () => '1').join(' + '));
    expect(error.message).toContain('More than 600 tokens');
  });

  it('refuses a parsed tree that is too deep', async () => {
    const error = await selectError(Array.from({ length: 100 }, () => '1').join(' + '));
    expect(error.message).toMatch(/is too complex$/);
  });

  it('gives up on a parse that takes too long', async () => {
    const impatient = new HogQLCompiler({ limits: { parseTimeoutMs: 1 } });
    const nested = `${'not lower('.repeat(12)}event${')'.repeat(12)}`;
    const error = await impatient
      .compileWhere([nested], new QueryParams())
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: 'limit', attr: 'where' });
    expect((error as HogQLError).message).toContain('is too complex to parse in time');
    // The parser is usable afterwards.
    expect((await where("event = 'a'")).sql).toBe('equals(event, {p0:String})');
  });
});

describe('parseExpressionListParam', () => {
  it('reads a JSON array of strings', () => {
    expect(parseExpressionListParam('["event", "count()"]', 'select')).toEqual(['event', 'count()']);
  });

  it('gives undefined for a missing or empty parameter', () => {
    expect(parseExpressionListParam(undefined, 'where')).toBeUndefined();
    expect(parseExpressionListParam('  ', 'where')).toBeUndefined();
  });

  it.each(['event', '{"a": 1}', '[1]', '["a", null]', '[nope'])('refuses %s', (raw) => {
    expect(() => parseExpressionListParam(raw, 'where')).toThrow(
      new HogQLError('where must be a JSON array of HogQL expressions', { kind: 'syntax' }),
    );
  });
});
