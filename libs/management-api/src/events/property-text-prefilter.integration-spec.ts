import { randomUUID } from 'node:crypto';
import { compilePropertyFilters, QueryParams } from '@hogbase/hogql';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';

/**
 * The listing's `exact` property filters search the properties text for the value's spelling before
 * they parse the JSON, on rows the events table flags as plain (`properties_plain`, ClickHouse
 * migration 003). That search must be a superset test: on the migrated table in chDB, every filter
 * here matches the same events with it as without it, whatever the JSON's spelling.
 */
describe('the plain-text prefilter of exact property filters', () => {
  let clickhouse: TestClickHouse;
  /** distinct_id → raw properties text, as stored. */
  const stored = new Map<string, string>();

  /** Properties as clients and other writers may spell them, beside JSON.stringify's. */
  const RAW: readonly string[] = [
    '{"price":7}',
    '{"price":7.0}',
    '{"price":7e0}',
    '{"price":0.7E1}',
    '{"price":6.9999999999999999}',
    '{"price":70}',
    '{"price":-7}',
    '{"price":"7"}',
    '{"price": 7}',
    '{"price" :7}',
    '{"price":\n7}',
    '{\t"price":7 }',
    '{"pr\\u0069ce":7}',
    '{"price":"\\u0037"}',
    '{"o":{"price":7},"price":8}',
    '{"price":8,"price":7}',
    '{"price":7,"price":8}',
    '{"price":0}',
    '{"price":-0}',
    '{"price":-0.0}',
    '{"price":0.0}',
    '{"price":1e-7}',
    '{"price":0.0000001}',
    '{"price":20.5}',
    '{"price":20.50}',
    '{"price":"20.5"}',
    '{"price":12345678901234567890}',
    '{"price":-9223372036854775808}',
    '{"flag":true}',
    '{"flag":"true"}',
    '{"flag": false}',
    '{"flag":null}',
    '{"flag":""}',
    '{}',
    '{"obj":{"k":"v"}}',
    '{"obj": {"k": "v"}}',
    '{"obj":{"k":"\\u0076"}}',
    '{"arr":[1,2]}',
    '{"arr": [1, 2]}',
    '{"arr":[1.0,2]}',
    '{"url":"https://example.com/a"}',
    '{"url":"https:\\/\\/example.com\\/a"}',
    '{"name":"é💥"}',
    '{"name":"\\u00e9\\ud83d\\udca5"}',
    '{"name":"say \\"hi\\""}',
    '{"name":"tab\\there"}',
    '{"name":" lead"}',
    '{"name":"a b"}',
    '{"a b":"c"}',
    '{"a\\"b":"c"}',
    '{"$current_url":"https://example.com/p/7","price":7}',
    '[{"price":7}]',
    '{"price":7',
    'not json',
  ];

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    const rows = RAW.map((properties, index) => {
      const distinctId = `raw-${String(index).padStart(3, '0')}`;
      stored.set(distinctId, properties);
      return row(distinctId, properties);
    });
    rows.push(...randomRows(400));
    await clickhouse.client.insert({
      table: `${clickhouse.database}.events`,
      values: rows,
      format: 'JSONEachRow',
    });
  });

  afterAll(async () => {
    await clickhouse?.drop();
  });

  function row(distinctId: string, properties: string) {
    stored.set(distinctId, properties);
    return {
      uuid: randomUUID(),
      event: 'e',
      properties,
      timestamp: '2025-01-01 00:00:00.000000',
      team_id: 1,
      distinct_id: distinctId,
      created_at: '2025-01-01 00:00:00.000000',
      person_id: randomUUID(),
    };
  }

  /** Random properties, spelled compactly or with spaces, numbers sometimes with a fraction. */
  function randomRows(count: number) {
    let seed = 42;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const values = [7, 0, -1, 12, 7.5, 'x', 'x y', 'é', '7', '', true, false, null, { k: 1 }, [1, 'a']];
    const keys = ['price', 'k', '$browser', 'a b', 'é'];
    return Array.from({ length: count }, (_, index) => {
      const object: Record<string, unknown> = {};
      for (let member = 0; member < 1 + next(4); member += 1) {
        object[keys[next(keys.length)]] = values[next(values.length)];
      }
      let text = JSON.stringify(object);
      if (next(4) === 0) text = JSON.stringify(object, null, 1);
      if (next(5) === 0) text = text.replace(/:(-?\d+)([,}])/g, ':$1.0$2');
      if (next(6) === 0) text = text.replace(/:(-?\d+)([,}])/g, ':$1e0$2');
      return row(`random-${String(index).padStart(3, '0')}`, text);
    });
  }

  async function matching(filters: unknown, prefilter: boolean): Promise<{ ids: string[]; sql: string }> {
    const params = new QueryParams();
    const condition = await compilePropertyFilters(filters, params, {
      plainPropertiesColumn: prefilter ? 'properties_plain' : undefined,
    });
    const result = await clickhouse.client.query({
      query: `SELECT distinct_id FROM ${clickhouse.database}.events
              WHERE team_id = 1 AND ${condition ?? '1'} ORDER BY distinct_id`,
      query_params: params.values,
      format: 'JSONEachRow',
    });
    const ids = (await result.json<{ distinct_id: string }>()).map((event) => event.distinct_id);
    return { ids, sql: condition ?? '' };
  }

  const exact = (key: string, value: unknown) => [{ key, value, operator: 'exact', type: 'event' }];

  it.each([
    ['an integer', exact('price', 7)],
    ['an integer given as text', exact('price', '7')],
    ['a negative integer', exact('price', -7)],
    ['zero', exact('price', 0)],
    ['a decimal', exact('price', 20.5)],
    ['a tiny number', exact('price', 1e-7)],
    ['a big integer', exact('price', '12345678901234567890')],
    ['the smallest Int64', exact('price', '-9223372036854775808')],
    ['true', exact('flag', true)],
    ['false', exact('flag', 'false')],
    ['an object', exact('obj', { k: 'v' })],
    ['an object given as text', exact('obj', '{"k": "v"}')],
    ['an array', exact('arr', [[1, 2]])],
    ['an array given as text', exact('arr', '[1, 2]')],
    ['a URL', exact('url', 'https://example.com/a')],
    ['non-ASCII text', exact('name', 'é💥')],
    ['a value with quotes', exact('name', 'say "hi"')],
    ['a value with a tab', exact('name', 'tab\there')],
    ['a value with a leading space', exact('name', ' lead')],
    ['a key with a space', exact('a b', 'c')],
    ['a key with a quote', exact('a"b', 'c')],
    ['a list of values', exact('price', [7, '20.5', 0])],
    ['in', [{ key: 'price', value: ['7', 8], operator: 'in' }]],
    ['several filters', [...exact('price', 7), ...exact('$current_url', 'https://example.com/p/7')]],
    ['an OR group', { type: 'OR', values: [...exact('price', 8), ...exact('flag', true)] }],
  ])('matches what the JSON path matches: %s', async (_name, filters) => {
    const [withPrefilter, without] = [await matching(filters, true), await matching(filters, false)];
    expect(withPrefilter.ids).toEqual(without.ids);
    expect(without.ids.length).toBeGreaterThan(0);
  });

  it('matches every spelling of 7 that reads as 7', async () => {
    const { ids, sql } = await matching(exact('price', 7), true);
    expect(sql).toContain('multiSearchAny(properties');
    expect(ids.filter((id) => id.startsWith('raw-')).map((id) => stored.get(id))).toEqual([
      '{"price":7}',
      '{"price":7.0}',
      '{"price":7e0}',
      '{"price":0.7E1}',
      '{"price":6.9999999999999999}',
      '{"price":"7"}',
      '{"price": 7}',
      '{"price" :7}',
      '{"price":\n7}',
      '{\t"price":7 }',
      '{"pr\\u0069ce":7}',
      '{"price":"\\u0037"}',
      '{"price":7,"price":8}',
      '{"$current_url":"https://example.com/p/7","price":7}',
    ]);
  });

  it('matches what the JSON path matches for every value the random rows hold', async () => {
    const values = [7, 0, -1, 12, 7.5, 'x', 'x y', 'é', '7', true, false, { k: 1 }, [[1, 'a']]];
    for (const key of ['price', 'k', '$browser', 'a b', 'é']) {
      for (const value of values) {
        const [withPrefilter, without] = [
          await matching(exact(key, value), true),
          await matching(exact(key, value), false),
        ];
        expect({ key, value, ids: withPrefilter.ids }).toEqual({ key, value, ids: without.ids });
      }
    }
  });

  it('leaves filters alone where a missing key would match, and negations', async () => {
    expect((await matching(exact('flag', ''), true)).sql).not.toContain('properties_plain');
    expect((await matching(exact('flag', ['x', '']), true)).sql).not.toContain('properties_plain');
    const isNot = [{ key: 'price', value: 7, operator: 'is_not', type: 'event' }];
    expect((await matching(isNot, true)).ids).toEqual((await matching(isNot, false)).ids);
  });

  it('flags as plain only JSON a needle can find its members in', async () => {
    const result = await clickhouse.client.query({
      query: `SELECT properties, properties_plain FROM ${clickhouse.database}.events
              WHERE distinct_id LIKE 'raw-%' ORDER BY distinct_id`,
      format: 'JSONEachRow',
    });
    const flags = new Map(
      (await result.json<{ properties: string; properties_plain: number }>()).map((event) => [
        event.properties,
        event.properties_plain,
      ]),
    );
    expect(flags.get('{"price":7}')).toBe(1);
    expect(flags.get('{"$current_url":"https://example.com/p/7","price":7}')).toBe(1);
    expect(flags.get('{"arr":[1.0,2]}')).toBe(1);
    for (const notPlain of [
      '{"price":7.0}',
      '{"price":7e0}',
      '{"price": 7}',
      '{"price" :7}',
      '{"pr\\u0069ce":7}',
      '{"name":" lead"}',
      '{"url":"https:\\/\\/example.com\\/a"}',
    ]) {
      expect({ notPlain, flag: flags.get(notPlain) }).toEqual({ notPlain, flag: 0 });
    }
  });
});
