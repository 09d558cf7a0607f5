import {
  BATCH_EXPORT_QUERY_ERRORS,
  compileBatchExportQuery,
  DEFAULT_BATCH_EXPORT_QUERY_LIMITS,
  quoteClickHouseIdentifier,
  type CompiledBatchExportQuery,
} from './batch-export-query.util';
import { HogQLCompiler } from './hogql-compiler.util';
import { HogQLError } from './hogql.errors';
import { STAR_FIELDS } from './hogql-fields.util';
import { HogQLParser } from './hogql-parser.util';
import { QueryParams } from './query-params.util';

const parser = new HogQLParser();

afterAll(async () => {
  await parser.close();
});

async function compile(text: string): Promise<CompiledBatchExportQuery> {
  return compileBatchExportQuery(parser, text);
}

async function refusal(text: string): Promise<HogQLError> {
  return compile(text).then(
    () => {
      throw new Error(`expected ${text} to be refused`);
    },
    (error: unknown) => {
      if (!(error instanceof HogQLError)) throw error;
      return error;
    },
  );
}

const property = (column: string, ...keys: string[]) =>
  `JSONExtract(${column}, ${keys.map((_, index) => `{p${index}:String}`).join(', ')}, 'Nullable(String)')`;

describe("PostHog's refusals", () => {
  it.each([
    ['', BATCH_EXPORT_QUERY_ERRORS.parse],
    ['SELECT', BATCH_EXPORT_QUERY_ERRORS.parse],
    ['SELECT event,, FROM events', BATCH_EXPORT_QUERY_ERRORS.parse],
    ["SELECT 'unterminated FROM events", BATCH_EXPORT_QUERY_ERRORS.parse],
    ['SELECT event FROM events; SELECT 1', BATCH_EXPORT_QUERY_ERRORS.parse],
    ['<Sparkline />', BATCH_EXPORT_QUERY_ERRORS.parse],
    ['SELECT event FROM events UNION ALL SELECT event FROM events', BATCH_EXPORT_QUERY_ERRORS.union],
    ['SELECT event FROM events INTERSECT SELECT event FROM events', BATCH_EXPORT_QUERY_ERRORS.union],
    ['SELECT 1', BATCH_EXPORT_QUERY_ERRORS.noFrom],
    ['SELECT event', BATCH_EXPORT_QUERY_ERRORS.noFrom],
    ['WITH cte AS (SELECT event FROM events) SELECT event FROM cte', BATCH_EXPORT_QUERY_ERRORS.ctes],
    ['SELECT event FROM (SELECT event FROM events)', BATCH_EXPORT_QUERY_ERRORS.subquery],
    [
      'SELECT event FROM (SELECT event FROM events UNION ALL SELECT event FROM events)',
      BATCH_EXPORT_QUERY_ERRORS.subquery,
    ],
    ['SELECT id FROM persons', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    ['SELECT event FROM EVENTS', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    ['SELECT event FROM events.x', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    ['SELECT event FROM events(1)', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    ['SELECT number FROM numbers(10)', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    ['SELECT event FROM {table}', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    ['SELECT event FROM <Foo />', BATCH_EXPORT_QUERY_ERRORS.notEvents],
    [
      'SELECT event, persons.id FROM events LEFT JOIN persons ON events.person_id = persons.id',
      BATCH_EXPORT_QUERY_ERRORS.join,
    ],
    ['SELECT event FROM events, persons', BATCH_EXPORT_QUERY_ERRORS.join],
    ['SELECT e.event FROM events e INNER JOIN events f ON e.uuid = f.uuid', BATCH_EXPORT_QUERY_ERRORS.join],
    [
      'SELECT uuid, (SELECT event FROM events LIMIT 1) AS leaked FROM events',
      BATCH_EXPORT_QUERY_ERRORS.selectSubquery,
    ],
    [
      'SELECT coalesce((SELECT uuid FROM events LIMIT 1), uuid) AS foo FROM events',
      BATCH_EXPORT_QUERY_ERRORS.selectSubquery,
    ],
    ['SELECT event IN (SELECT event FROM events) FROM events', BATCH_EXPORT_QUERY_ERRORS.selectSubquery],
  ])('refuses %j with %j', async (text, message) => {
    const error = await refusal(text);
    expect([error.message, error.attr]).toEqual([message, 'hogql_query']);
  });

  it('says "Failed to parse query" when the parser crashes', async () => {
    const crashing = `SELECT ${Array.from({ length: 400 }, () => 'a').join(' + ')} FROM events`;
    expect((await refusal(crashing)).message).toBe(BATCH_EXPORT_QUERY_ERRORS.parse);
  });

  it('reports unknown fields and functions as an invalid HogQL query', async () => {
    expect((await refusal('SELECT unknown_field FROM events')).message).toBe(
      'Invalid HogQL query: Unknown field: "unknown_field" in "SELECT unknown_field FROM events"',
    );
    expect((await refusal('SELECT uuid, nope(event) AS x FROM events')).message).toBe(
      'Invalid HogQL query: Unknown or disallowed function nope(): "nope(event)" in "SELECT uuid, nope(event) AS x FROM events"',
    );
    expect((await refusal('SELECT team_id AS my_team FROM events')).message).toMatch(
      /^Invalid HogQL query: The field team_id cannot be selected/,
    );
  });

  it('refuses an alias used twice, as PostHog does', async () => {
    expect((await refusal('SELECT event AS a, uuid AS a FROM events')).message).toBe(
      'Invalid HogQL query: Cannot redefine an alias with the name: a',
    );
  });

  it('refuses an empty alias, as PostHog does', async () => {
    expect((await refusal('SELECT event AS `` FROM events')).message).toBe(
      'Invalid HogQL query: Alias cannot be empty',
    );
  });
});

describe('refusals PostHog does not make', () => {
  it.each([
    ["SELECT event FROM events WHERE event = 'x'", 'WHERE'],
    ['SELECT event FROM events PREWHERE 1', 'PREWHERE'],
    ['SELECT event FROM events GROUP BY event', 'GROUP BY'],
    ['SELECT event FROM events HAVING 1', 'HAVING'],
    ['SELECT event FROM events QUALIFY 1', 'QUALIFY'],
    ['SELECT event FROM events ORDER BY timestamp', 'ORDER BY'],
    ['SELECT event FROM events LIMIT 10', 'LIMIT'],
    ['SELECT event FROM events LIMIT 10 OFFSET 5', 'LIMIT'],
    ['SELECT event FROM events LIMIT 1 BY event', 'LIMIT BY'],
    ['SELECT DISTINCT event FROM events', 'DISTINCT'],
    ['SELECT event FROM events WINDOW w AS (PARTITION BY event)', 'WINDOW'],
    ['SELECT event FROM events ARRAY JOIN [1, 2] AS n', 'ARRAY JOIN'],
    ['SELECT event FROM events FINAL', 'FINAL'],
    ['SELECT event FROM events SAMPLE 0.1', 'SAMPLE'],
    ['SELECT event FROM events AS e(a)', 'Column aliases'],
  ])('refuses %j: its %s would be ignored', async (text, clause) => {
    const error = await refusal(text);
    expect([error.message, error.attr, error.kind]).toEqual([
      `${clause} is not supported in batch export queries: only the SELECT list is exported`,
      'hogql_query',
      'unsupported',
    ]);
  });

  it('refuses aggregations: each exported row is one event', async () => {
    expect((await refusal('SELECT count() AS n FROM events')).message).toBe(
      'Invalid HogQL query: Aggregations are not supported in batch export queries (each exported row is one event): "count()"',
    );
    expect((await refusal('SELECT event, plus(uniq(distinct_id), 1) FROM events')).message).toMatch(
      /^Invalid HogQL query: Aggregations are not supported/,
    );
  });

  it('refuses person, which the listing selects as a tuple', async () => {
    expect((await refusal('SELECT person FROM events')).message).toBe(
      'Invalid HogQL query: person is not a column: select person.id, person.properties.<key> or person.created_at',
    );
  });

  it.each([
    // Unquoted, the parser refuses team_id as an alias; quoted, it does not.
    ['SELECT toInt(1) AS `team_id` FROM events', 'team_id', ''],
    ['SELECT toString(timestamp) AS timestamp FROM events', 'timestamp', ''],
    ['SELECT uuid AS event FROM events', 'event', ''],
    ['SELECT event AS _timestamp FROM events', '_timestamp', ''],
    ['SELECT person.created_at FROM events', 'created_at', ': name "person.created_at" with AS'],
    ['SELECT person.properties FROM events', 'properties', ': name "person.properties" with AS'],
  ])('refuses %j: its column name %j would shadow a column', async (text, alias, hint) => {
    const error = await refusal(text);
    expect([error.message, error.kind]).toEqual([
      `Invalid HogQL query: The column name "${alias}" is the name of a column of the events table and may only name that column${hint}`,
      'value',
    ]);
  });

  it('refuses two columns of the same name', async () => {
    expect((await refusal('SELECT event, event FROM events')).message).toBe(
      'Invalid HogQL query: More than one column is named "event": name them apart with AS',
    );
    expect((await refusal('SELECT *, uuid FROM events')).message).toBe(
      'Invalid HogQL query: More than one column is named "uuid": name them apart with AS',
    );
    expect((await refusal('SELECT properties.$browser, event AS $browser FROM events')).message).toBe(
      'Invalid HogQL query: More than one column is named "$browser": name them apart with AS',
    );
  });

  it('refuses column names that are too long or hold control characters', async () => {
    const long = `concat(${Array.from({ length: 60 }, (_, index) => `'${index}'`).join(', ')})`;
    expect((await refusal(`SELECT ${long} FROM events`)).message).toBe(
      `Invalid HogQL query: The column name "${long.slice(0, 120)}…" is longer than 255 characters: name "${long.slice(0, 120)}…" with AS`,
    );
    expect((await refusal('SELECT event AS "a\\nb" FROM events')).message).toBe(
      'Invalid HogQL query: The column name "a\nb" contains control characters',
    );
  });

  it('refuses more columns than the limit, counting those of *', async () => {
    const error = await compileBatchExportQuery(parser, 'SELECT *, event AS e2 FROM events', {
      limits: { maxColumns: STAR_FIELDS.length },
    }).catch((caught: unknown) => caught);
    expect(error).toEqual(
      new HogQLError(
        `Invalid HogQL query: A batch export query selects at most ${STAR_FIELDS.length} columns`,
        {
          kind: 'limit',
        },
      ),
    );
  });

  it('refuses comments and over-long text before parsing', async () => {
    expect((await refusal('SELECT event FROM events -- all of them')).message).toBe(
      'Invalid HogQL query: Comments are not allowed in "SELECT event FROM events -- all of them"',
    );
    const error = await compileBatchExportQuery(parser, 'SELECT event FROM events', {
      limits: { maxQueryLength: 10 },
    }).catch((caught: unknown) => caught);
    expect((error as HogQLError).message).toBe('Invalid HogQL query: The query is longer than 10 characters');
  });

  it('refuses a query too slow to parse in time', async () => {
    const slow = `SELECT ${'lower('.repeat(10)}event${')'.repeat(10)} AS e FROM events`;
    const error = await compileBatchExportQuery(parser, slow, { limits: { parseTimeoutMs: 1 } }).catch(
      (caught: unknown) => caught,
    );
    expect([(error as HogQLError).message, (error as HogQLError).kind]).toEqual([
      `Invalid HogQL query: Query "${slow}" is too complex to parse in time`,
      'limit',
    ]);
  });
});

describe('valid queries', () => {
  it("compiles PostHog's example to fields, columns and bound values", async () => {
    const params = new QueryParams();
    const result = await compileBatchExportQuery(
      parser,
      'SELECT uuid, event, properties.$browser AS browser, toString(timestamp) AS ts FROM events',
      { params },
    );
    expect(result.fields).toEqual([
      { expression: 'uuid', alias: 'uuid' },
      { expression: 'event', alias: 'event' },
      { expression: 'properties.$browser', alias: 'browser' },
      { expression: 'toString(timestamp)', alias: 'ts' },
    ]);
    expect(result.columns).toEqual([
      { alias: 'uuid', sql: 'uuid', selectSql: 'uuid AS `uuid`' },
      { alias: 'event', sql: 'event', selectSql: 'event AS `event`' },
      {
        alias: 'browser',
        sql: property('properties', '$browser'),
        selectSql: `${property('properties', '$browser')} AS \`browser\``,
      },
      { alias: 'ts', sql: 'toString(timestamp)', selectSql: 'toString(timestamp) AS `ts`' },
    ]);
    expect(result.params).toBe(params);
    expect(params.values).toEqual({ p0: '$browser' });
  });

  it('names columns without AS as PostHog does', async () => {
    const result = await compile(
      "SELECT uuid, properties.$browser, properties.a.b, properties['c d'], person.properties.email, " +
        "person.id, person_id, $group_0, lower(event), concat(distinct_id,\n   'x') FROM events",
    );
    expect(result.fields).toEqual([
      { expression: 'uuid', alias: 'uuid' },
      { expression: 'properties.$browser', alias: '$browser' },
      { expression: 'properties.a.b', alias: 'a__b' },
      { expression: "properties['c d']", alias: 'c d' },
      { expression: 'person.properties.email', alias: 'email' },
      { expression: 'person.id', alias: 'id' },
      { expression: 'person_id', alias: 'person_id' },
      { expression: '$group_0', alias: '$group_0' },
      { expression: 'lower(event)', alias: 'lower(event)' },
      { expression: "concat(distinct_id,\n   'x')", alias: "concat(distinct_id, 'x')" },
    ]);
  });
});

describe('valid queries, more shapes', () => {
  it('reads fields through the table name or its alias, and leaves the name out of expression', async () => {
    const result = await compile(
      "SELECT e.event, `e`.properties.$browser AS browser, lower(e . distinct_id) AS id, e.properties['a b'], " +
        "concat('💥', e.event) AS boom FROM events AS e",
    );
    expect(result.fields).toEqual([
      { expression: 'event', alias: 'event' },
      { expression: 'properties.$browser', alias: 'browser' },
      { expression: 'lower(distinct_id)', alias: 'id' },
      { expression: "properties['a b']", alias: 'a b' },
      { expression: "concat('💥', event)", alias: 'boom' },
    ]);
    expect(result.columns.map((column) => column.sql)).toEqual([
      'event',
      property('properties', '$browser'),
      'lower(distinct_id)',
      `JSONExtract(properties, {p1:String}, 'Nullable(String)')`,
      'concat({p2:String}, event)',
    ]);
    expect((await compile('SELECT events.uuid FROM events')).fields).toEqual([
      { expression: 'uuid', alias: 'uuid' },
    ]);
  });

  it('does not read events.<field> once the table has another name, as PostHog does not', async () => {
    expect((await refusal('SELECT events.event FROM events AS e')).message).toBe(
      'Invalid HogQL query: Unknown field: "events.event" in "SELECT events.event FROM events AS e"',
    );
  });

  it('expands * to the columns the listing puts in its * tuple, each its own column', async () => {
    for (const text of ['SELECT * FROM events', 'SELECT e.* FROM events e', 'SELECT events.* FROM events']) {
      const result = await compile(text);
      expect(result.fields).toEqual(STAR_FIELDS.map((name) => ({ expression: name, alias: name })));
      expect(result.columns).toEqual(
        STAR_FIELDS.map((name) => ({ alias: name, sql: name, selectSql: `${name} AS \`${name}\`` })),
      );
    }
    const mixed = await compile('SELECT *, lower(event) AS lower_event FROM events');
    expect(mixed.fields.map((field) => field.alias)).toEqual([...STAR_FIELDS, 'lower_event']);
  });

  it('lets a column keep its own name', async () => {
    const result = await compile('SELECT event AS event, `$group_0`, uuid AS "uuid" FROM events');
    expect(result.columns.map((column) => column.selectSql)).toEqual([
      'event AS `event`',
      '`$group_0` AS `$group_0`',
      'uuid AS `uuid`',
    ]);
  });

  it('quotes any column name as a ClickHouse identifier', async () => {
    const result = await compile('SELECT event AS "a`b\\\\c 💥 \'x" FROM events');
    expect(result.fields).toEqual([{ expression: 'event', alias: "a`b\\c 💥 'x" }]);
    expect(result.columns[0].selectSql).toBe("event AS `a\\`b\\\\c 💥 'x`");
    expect(quoteClickHouseIdentifier('plain')).toBe('`plain`');
  });

  it('binds values with the given params, after those already bound', async () => {
    const params = new QueryParams({ prefix: 'hq' });
    params.int(7);
    const result = await compileBatchExportQuery(
      parser,
      "SELECT if(event = '$pageview', 'view', 'other') AS kind, dateAdd('day', 1, timestamp) AS next_day FROM events",
      { params },
    );
    expect(result.columns.map((column) => column.sql)).toEqual([
      'if(equals(event, {hq1:String}), {hq2:String}, {hq3:String})',
      expect.stringContaining('{hq4:Int64}'),
    ]);
    expect(params.values).toEqual({ hq0: 7, hq1: '$pageview', hq2: 'view', hq3: 'other', hq4: 1 });
  });

  it('compiles each field to what the listing compiles its expression to', async () => {
    const listing = new HogQLCompiler({ parser });
    for (const text of [
      'SELECT uuid, event, properties.$browser AS browser, toString(timestamp) AS ts FROM events',
      "SELECT e.properties.price * 2 AS double, e.timestamp > '2024-01-01' AS recent, person.properties.email FROM events e",
      "SELECT multiIf(event = 'a', 1, event = 'b', 2, 0) AS n, coalesce(properties.x, properties.y, '') AS xy FROM events",
      'SELECT * FROM events',
    ]) {
      const result = await compile(text);
      const expected = await listing.compileSelect(
        result.fields.map((field) => field.expression),
        new QueryParams(),
      );
      expect(result.columns.map((column) => column.sql)).toEqual(
        expected.columns.map((column) => column.sql),
      );
    }
  });

  it(`compiles a query of ${DEFAULT_BATCH_EXPORT_QUERY_LIMITS.maxColumns} columns`, async () => {
    const columns = Array.from(
      { length: DEFAULT_BATCH_EXPORT_QUERY_LIMITS.maxColumns },
      (_, index) => `concat(properties.key_${index}, lower(event)) AS c${index}`,
    );
    const result = await compile(`SELECT ${columns.join(', ')} FROM events`);
    expect(result.fields).toHaveLength(DEFAULT_BATCH_EXPORT_QUERY_LIMITS.maxColumns);
    expect(result.fields[99]).toEqual({
      expression: 'concat(properties.key_99, lower(event))',
      alias: 'c99',
    });
  });
});
