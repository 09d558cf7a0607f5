import { randomUUID } from 'node:crypto';
import { formatClickHouseDateTime } from '@hogbase/hogql';
import { insertEvents, type EventRow } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { ApiClient, followPages, ManagementTestApp, startManagementTestApp } from './management-test-app';

/**
 * A newest-first page reads time windows one below the other (the day of the upper bound, then
 * windows sized by how many events matched so far) and concatenates them. Whatever the windows,
 * the page must be what one query over the whole range answers: same events, same order, none
 * twice, none skipped, also with an offset, a cursor and redelivered (duplicate) rows.
 */
describe('event listing over time windows', () => {
  const DAY_MS = 86_400_000;
  let clickhouse: TestClickHouse;
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let projectId: number;
  const events = (params: Record<string, string>) =>
    `/api/projects/${projectId}/events/?${new URLSearchParams(params).toString()}`;
  const rare = JSON.stringify([{ key: 'rare', value: 'yes', operator: 'exact' }]);
  const common = JSON.stringify([{ key: 'n', value: [1, 2, 3], operator: 'exact' }]);

  const at = (epochMs: number) =>
    formatClickHouseDateTime({ epochMicros: BigInt(epochMs) * 1000n, dateOnly: false });

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    ({ api, projectId } = await testApp.createOwner('owner@windows.test'));

    const now = Date.now();
    const todayStart = now - (now % DAY_MS);
    const rows: EventRow[] = [];
    const row = (timestampMs: number, properties: Record<string, unknown>): EventRow => ({
      uuid: randomUUID(),
      event: 'tick',
      properties: JSON.stringify(properties),
      timestamp: at(timestampMs),
      team_id: projectId,
      distinct_id: 'visitor',
      created_at: at(timestampMs),
      person_id: randomUUID(),
      person_properties: '{}',
    });
    // 1,500 events over the last 200 days; every 37th is rare, so a page of rare events needs
    // several windows. Three share the first window's start, to the microsecond.
    for (let index = 0; index < 1_500; index += 1) {
      const timestampMs = now - 1_000 - Math.floor((index * 200 * DAY_MS) / 1_500);
      rows.push(row(timestampMs, { n: index % 10, rare: index % 37 === 0 ? 'yes' : 'no' }));
    }
    for (let index = 0; index < 3; index += 1) rows.push(row(todayStart, { n: 1, rare: 'yes' }));
    await insertEvents(clickhouse.client, clickhouse.database, rows);
    // Redelivered: some rare rows again, which must not show twice.
    await insertEvents(
      clickhouse.client,
      clickhouse.database,
      rows.filter((event) => event.properties.includes('"rare":"yes"')).slice(0, 10),
    );
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  /** The ids one query over the whole range returns, newest first (by uuid, not its text, on ties). */
  async function oneQuery(condition: string): Promise<string[]> {
    const result = await clickhouse.client.query({
      query: `SELECT toString(uuid) AS id FROM ${clickhouse.database}.events FINAL
              WHERE team_id = {team:Int64} AND ${condition}
              ORDER BY timestamp DESC, uuid DESC`,
      query_params: { team: projectId },
      format: 'JSONEachRow',
    });
    return (await result.json<{ id: string }>()).map((row) => row.id);
  }

  async function collect(first: string): Promise<{ ids: string[]; pages: number }> {
    const { results, pages } = await followPages<{ id: string }>(api, first, 99);
    return { ids: results.map((event) => event.id), pages };
  }

  it('serves a selective filter as one query over the whole range would, page after page', async () => {
    const expected = await oneQuery(`JSONExtractString(properties, 'rare') = 'yes'`);
    expect(expected.length).toBe(44);
    const { ids, pages } = await collect(events({ properties: rare, limit: '10', after: '-365d' }));
    expect(ids).toEqual(expected);
    expect(pages).toBe(5);
  });

  it.each([
    ['a selective filter', { properties: rare }, `JSONExtractString(properties, 'rare') = 'yes'`],
    ['a common filter', { properties: common }, `JSONExtractString(properties, 'n') IN ('1', '2', '3')`],
    ['no filter', {}, '1'],
  ])('applies an offset across windows (%s)', async (_name, params, condition) => {
    const expected = await oneQuery(condition);
    const response = await api.get(events({ ...params, limit: '20', offset: '15', after: '-365d' }));
    expect(response.status).toBe(200);
    expect(response.body.results.map((event: { id: string }) => event.id)).toEqual(expected.slice(15, 35));
  });

  it('returns every match when fewer than a page exist, with no next page', async () => {
    const expected = await oneQuery(`JSONExtractString(properties, 'rare') = 'yes'`);
    const response = await api.get(events({ properties: rare, limit: '100', after: '-365d' }));
    expect(response.body.results.map((event: { id: string }) => event.id)).toEqual(expected);
    expect(response.body.next).toBeNull();
  });

  it('stops at `after` however far the windows would reach', async () => {
    const expected = await oneQuery(
      `JSONExtractString(properties, 'rare') = 'yes' AND timestamp > now64(6) - toIntervalDay(90)`,
    );
    const response = await api.get(events({ properties: rare, limit: '100', after: '-90d' }));
    expect(response.body.results.map((event: { id: string }) => event.id)).toEqual(expected);
  });
});
