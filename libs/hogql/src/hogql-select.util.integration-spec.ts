import { closeSharedHogQLParser } from './hogql-parser.util';
import { HogQLError } from './hogql.errors';
import { HogQLStatementCompiler, type HogQLStatementOptions } from './hogql-select.util';
import { QueryParams } from './query-params.util';
import {
  createTestEventsTable,
  type TestEventRow,
  type TestEventsTable,
} from './testing/test-events-table.util';

/**
 * Whole HogQL statements compiled and run on chDB over generated events of two projects. Every
 * expected answer is computed here from the rows this test made, never from the compiler's output.
 */
const TEAM = 1;
const OTHER_TEAM = 2;
const BROWSERS = ['Chrome', 'Firefox', 'Safari'];

let events: TestEventsTable;
const compiler = new HogQLStatementCompiler();
const rows: TestEventRow[] = [];

function uuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

beforeAll(async () => {
  events = await createTestEventsTable({ replacing: true });
  for (let n = 0; n < 240; n += 1) {
    rows.push({
      uuid: uuid(n),
      event: n % 4 === 0 ? 'signup' : '$pageview',
      distinct_id: `user-${n % 12}`,
      team_id: TEAM,
      timestamp: `2024-01-${String(1 + (n % 28)).padStart(2, '0')} ${String(n % 24).padStart(2, '0')}:00:00.000000`,
      properties: { $browser: BROWSERS[n % 3], price: n % 10 },
      person_properties: { plan: n % 12 < 4 ? 'pro' : 'free' },
    });
  }
  // The other project: the same distinct ids and events, and a marker no answer may ever show.
  for (let n = 0; n < 60; n += 1) {
    rows.push({
      uuid: uuid(10_000 + n),
      event: n % 2 === 0 ? 'signup' : 'leaked',
      distinct_id: `user-${n % 12}`,
      team_id: OTHER_TEAM,
      properties: { $browser: 'Chrome', price: 1000, secret: 'other-project' },
    });
  }
  await events.insert(rows);
  // A redelivered batch: the same events again, which every read must count once.
  await events.insert(rows.slice(0, 40));
});

afterAll(async () => {
  await events?.drop();
  await closeSharedHogQLParser();
});

const ours = (): TestEventRow[] => rows.filter((row) => row.team_id === TEAM);

async function run(
  text: string,
  options: Partial<HogQLStatementOptions> = {},
): Promise<{ columns: string[]; results: unknown[][]; hasMore: boolean }> {
  const params = new QueryParams();
  const database = events.table.split('.')[0];
  const compiled = await compiler.compile(text, { database, teamId: TEAM, params, ...options });
  const result = await events.client.query({
    query: compiled.sql,
    query_params: params.values,
    format: 'JSONCompactEachRow',
  });
  const all = await result.json<unknown[]>();
  return {
    columns: compiled.columns,
    results: all.slice(0, compiled.limit),
    hasMore: all.length > compiled.limit,
  };
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

const browserOf = (row: TestEventRow): string => (row.properties as { $browser: string }).$browser;

describe('HogQL statements on chDB', () => {
  it('counts per event, once per event though a batch was inserted twice, only in the project', async () => {
    const { columns, results } = await run('select event, count() from events group by event order by event');
    expect(columns).toEqual(['event', 'count()']);
    const expected = [...countBy(ours(), (row) => row.event)].sort(([a], [b]) => a.localeCompare(b));
    expect(results).toEqual(expected);
  });

  it('reads properties and the person of the event', async () => {
    const { results } = await run(
      `select properties.$browser as browser, person.properties.plan as plan, count() as c
         from events group by browser, plan order by browser, plan`,
    );
    const expected = [
      ...countBy(ours(), (row) => `${browserOf(row)}|${(row.person_properties as { plan: string }).plan}`),
    ]
      .map(([key, count]) => [...key.split('|'), count])
      .sort((a, b) => `${a[0]}|${a[1]}`.localeCompare(`${b[0]}|${b[1]}`));
    expect(results).toEqual(expected);
  });

  it('joins a subquery by alias, filters with a placeholder and orders by a select alias', async () => {
    const { columns, results } = await run(
      `select e.distinct_id, count() as views, max(s.signups) as signups
         from events as e
         inner join (select distinct_id, count() as signups from events where event = 'signup' group by distinct_id) as s
           on e.distinct_id = s.distinct_id
        where e.event = {kind} and e.properties.$browser != {skip}
        group by e.distinct_id
        order by views desc, e.distinct_id
        limit 3`,
      { values: { kind: '$pageview', skip: 'Safari' } },
    );
    expect(columns).toEqual(['distinct_id', 'views', 'signups']);
    const signups = countBy(
      ours().filter((row) => row.event === 'signup'),
      (row) => row.distinct_id,
    );
    const views = countBy(
      ours().filter((row) => row.event === '$pageview' && browserOf(row) !== 'Safari'),
      (row) => row.distinct_id,
    );
    const expected = [...views]
      .filter(([id]) => signups.has(id))
      .map(([id, count]) => [id, count, signups.get(id)])
      .sort((a, b) => Number(b[1]) - Number(a[1]) || String(a[0]).localeCompare(String(b[0])))
      .slice(0, 3);
    expect(results).toEqual(expected);
  });

  it('answers a UNION ALL, each part in the project', async () => {
    const { results } = await run(
      `select 'signup' as kind, count() as n from events where event = 'signup'
       union all
       select 'all', count() from events`,
    );
    // A UNION's parts come back in no fixed order.
    expect([...results].sort()).toEqual(
      [
        ['signup', ours().filter((row) => row.event === 'signup').length],
        ['all', ours().length],
      ].sort(),
    );
  });

  it('returns 100 rows by default with hasMore, and never more than the maximum', async () => {
    const byDefault = await run('select uuid from events order by uuid');
    expect(byDefault.results).toHaveLength(100);
    expect(byDefault.hasMore).toBe(true);
    const capped = await run('select uuid from events order by uuid limit 100000', { maxLimit: 150 });
    expect(capped.results).toHaveLength(150);
    expect(capped.hasMore).toBe(true);
    const all = await run('select uuid from events order by uuid limit 1000');
    expect(all.results).toHaveLength(ours().length);
    expect(all.hasMore).toBe(false);
    const page = await run('select uuid from events order by uuid limit 5 offset 10');
    expect(page.results).toEqual(
      ours()
        .map((row) => [row.uuid])
        .slice(10, 15),
    );
  });

  it('filters with IN (subquery), each subquery in the project, coercing a property to the other side', async () => {
    const signedUp = new Set(
      ours()
        .filter((row) => row.event === 'signup')
        .map((row) => row.distinct_id),
    );
    const byId = await run(
      "select count() from events where event = '$pageview' and distinct_id in (select distinct_id from events where event = 'signup')",
    );
    expect(byId.results).toEqual([
      [ours().filter((row) => row.event === '$pageview' && signedUp.has(row.distinct_id)).length],
    ]);
    const prices = new Set(
      ours()
        .filter((row) => row.event === 'signup')
        .map((row) => (row.properties as { price: number }).price),
    );
    const byNumber = await run(
      "select count() from events where toFloat(properties.price) not in (select properties.price from events where event = 'signup')",
    );
    expect(byNumber.results).toEqual([
      [ours().filter((row) => !prices.has((row.properties as { price: number }).price)).length],
    ]);
    const leaked = await run(
      "select count() from events where distinct_id in (select distinct_id from events where event = 'leaked')",
    );
    expect(leaked.results).toEqual([[0]]);
  });

  it('expands * to the columns of the event', async () => {
    const { columns, results } = await run(`select * from events where uuid = '${uuid(7)}'`);
    expect(columns).toEqual([
      'uuid',
      'event',
      'properties',
      'timestamp',
      'distinct_id',
      'elements_chain',
      'created_at',
      'person_id',
      'person_created_at',
    ]);
    expect(results).toHaveLength(1);
    expect(results[0][0]).toBe(uuid(7));
  });

  it.each([
    'select count() from events where team_id = 2',
    'select team_id from events',
    'select e.team_id from events e',
    'select * from system.tables',
    'select * from numbers(10)',
    "select * from url('http://127.0.0.1/x', 'CSV')",
    "select * from s3('http://127.0.0.1/b/x')",
    "select * from remote('127.0.0.1', 'default', 'events')",
    "select * from file('/etc/passwd')",
    'select * from events final',
    'select * from events settings max_execution_time = 1000',
    'with x as (select * from events) select * from x',
    'select * from events as a array join [1, 2] as b',
    'select 1 as team_id',
    'select * from events as team_id',
    'select * from person_distinct_id2',
    'select * from (select * from events) as t where t.team_id = 2',
    'select count() from events where uuid in (select uuid, event from events)',
    'select count() from events where uuid in (select timestamp from events)',
  ])('refuses %s with a HogQLError', async (text) => {
    await expect(run(text)).rejects.toBeInstanceOf(HogQLError);
  });

  it.each([
    'select e.* from events as e inner join events as f on e.uuid = f.uuid',
    "select properties from events where properties.secret = 'other-project' or 1 = 1",
    'select event from (select event from events union all select event from events) as u',
    "select event, distinct_id from events as events where event = 'leaked' or true",
    'select * from events as e cross join events as f limit 5000',
  ])('never answers with another project’s rows: %s', async (text) => {
    const { results } = await run(text, { defaultLimit: 50_000, maxLimit: 50_000 });
    const serialized = JSON.stringify(results);
    expect(serialized).not.toContain('other-project');
    expect(serialized).not.toContain('leaked');
    expect(serialized).not.toContain(uuid(10_000));
  });
});
