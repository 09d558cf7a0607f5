import { EVENTS_TABLE_COLUMNS } from '@hogbase/clickhouse';
import { compileBatchExportQuery, type CompiledBatchExportQuery } from './batch-export-query.util';
import { STAR_FIELDS } from './hogql-fields.util';
import { HogQLParser } from './hogql-parser.util';
import { QueryParams } from './query-params.util';
import { createTestEventsTable, type TestEventsTable } from './testing/test-events-table.util';

/**
 * Runs compiled batch export columns in chDB the way an export worker will:
 * `SELECT <columns> FROM events WHERE team_id = {team} AND …`, rows as JSONEachRow.
 */
const parser = new HogQLParser();
let events: TestEventsTable;

beforeAll(async () => {
  events = await createTestEventsTable();
  await events.insert([
    {
      uuid: '00000000-0000-4000-8000-000000000001',
      event: '$pageview',
      distinct_id: 'd1',
      team_id: 1,
      timestamp: '2024-01-10 12:00:00.123456',
      person_id: '00000000-0000-4000-8000-0000000000a1',
      properties: { $browser: 'Chrome', price: 10, nested: { a: { b: 'deep' } }, 'a b': true },
      person_properties: { email: 'ann@example.com' },
    },
    {
      uuid: '00000000-0000-4000-8000-000000000002',
      event: 'signup',
      distinct_id: 'd2',
      team_id: 1,
      timestamp: '2024-01-11 00:00:00.000000',
      properties: { price: '2.5', $group_0: 'acme' },
    },
    {
      uuid: '00000000-0000-4000-8000-000000000003',
      event: '$pageview',
      distinct_id: 'other-team',
      team_id: 2,
      properties: { $browser: 'Firefox' },
    },
  ]);
});

afterAll(async () => {
  await events?.drop();
  await parser.close();
});

/** Team 1's rows of the compiled columns, as JSONEachRow objects, oldest first. */
async function exportRows(compiled: CompiledBatchExportQuery): Promise<Record<string, unknown>[]> {
  const select = compiled.columns.map((column) => column.selectSql).join(', ');
  return events.query(
    `SELECT ${select} FROM ${events.table} WHERE team_id = {team:Int64} AND timestamp >= {start:DateTime64(6, 'UTC')} ORDER BY timestamp`,
    { ...compiled.params.values, team: 1, start: '2024-01-01 00:00:00' },
  );
}

describe('batch export columns in ClickHouse', () => {
  it('exports each column under its name, with the values the query asks for', async () => {
    const compiled = await compileBatchExportQuery(
      parser,
      'SELECT uuid, event, properties.$browser AS browser, toString(timestamp) AS ts, ' +
        "e.properties.nested.a.b, properties['a b'], toFloat(properties.price) * 2 AS double_price, " +
        "person.properties.email, $group_0, if(event = '$pageview', 'view', 'other') AS kind, " +
        'lower(distinct_id) AS "the `id` 💥" FROM events AS e',
      { params: new QueryParams({ prefix: 'hq' }) },
    );
    expect(await exportRows(compiled)).toEqual([
      {
        uuid: '00000000-0000-4000-8000-000000000001',
        event: '$pageview',
        browser: 'Chrome',
        ts: '2024-01-10 12:00:00.123456',
        nested__a__b: 'deep',
        'a b': 'true',
        double_price: 20,
        email: 'ann@example.com',
        $group_0: '',
        kind: 'view',
        'the `id` 💥': 'd1',
      },
      {
        uuid: '00000000-0000-4000-8000-000000000002',
        event: 'signup',
        browser: null,
        ts: '2024-01-11 00:00:00.000000',
        nested__a__b: null,
        'a b': null,
        double_price: 5,
        email: null,
        $group_0: 'acme',
        kind: 'other',
        'the `id` 💥': 'd2',
      },
    ]);
  });

  it('exports * as the listed columns, without team_id', async () => {
    const rows = await exportRows(await compileBatchExportQuery(parser, 'SELECT * FROM events'));
    expect(rows.map((row) => Object.keys(row))).toEqual([[...STAR_FIELDS], [...STAR_FIELDS]]);
    expect(rows[0]).toMatchObject({
      uuid: '00000000-0000-4000-8000-000000000001',
      event: '$pageview',
      distinct_id: 'd1',
      person_id: '00000000-0000-4000-8000-0000000000a1',
    });
    expect(JSON.parse(rows[0].properties as string)).toMatchObject({ $browser: 'Chrome', price: 10 });
  });

  it('names every column of the events table among the names a column may not take', async () => {
    const columns = await events.query<{ name: string }>(
      `SELECT name FROM system.columns WHERE database = {database:String} AND table = 'events' ORDER BY position`,
      { database: events.table.split('.')[0] },
    );
    expect([...EVENTS_TABLE_COLUMNS].sort()).toEqual(columns.map((column) => column.name).sort());
  });

  it('needs those names refused: ClickHouse lets an alias named after a column change WHERE', async () => {
    const rows = await events.query<{ team_id: number; distinct_id: string }>(
      `SELECT toInt64(1) AS team_id, distinct_id FROM ${events.table} WHERE team_id = {team:Int64} ORDER BY distinct_id`,
      { team: 1 },
    );
    // Team 2's event is there: the filter compared the constant, not the column.
    expect(rows.map((row) => row.distinct_id)).toEqual(['d1', 'd2', 'other-team']);
  });
});
