import { randomUUID } from 'node:crypto';
import { insertEvents, type EventRow } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { apiClient, ApiClient, ManagementTestApp, startManagementTestApp } from './management-test-app';

/**
 * The Query API's HogQLQuery over HTTP, as PostHog's clients call it: both prefixes, the scope, the
 * project wall, PostHog's answer shape. Expected answers are computed from the events made here.
 */
describe('Query API: HogQLQuery', () => {
  const MARKER = 'other-project-marker-q31';
  let clickhouse: TestClickHouse;
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let projectId: number;
  let otherProjectId: number;
  let otherApi: ApiClient;
  const own: EventRow[] = [];

  function rows(teamId: number, count: number, marker: string | null): EventRow[] {
    return Array.from({ length: count }, (_, index) => ({
      uuid: randomUUID(),
      event: marker ?? ['$pageview', 'purchase', 'signup'][index % 3],
      properties: JSON.stringify({ $browser: ['Chrome', 'Firefox'][index % 2], price: index, marker }),
      timestamp: `2025-03-${String((index % 28) + 1).padStart(2, '0')} 10:00:00.000000`,
      team_id: teamId,
      distinct_id: `user-${index % 7}`,
      created_at: '2025-03-29 00:00:00.000000',
      person_id: randomUUID(),
      person_properties: JSON.stringify({
        email: marker ? `${marker}@example.com` : `u${index % 7}@example.com`,
      }),
      elements_chain: '',
    }));
  }

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    const owner = await testApp.createOwner('owner@query.test');
    const other = await testApp.createOwner('owner@other-query.test');
    ({ api, projectId } = owner);
    otherProjectId = other.projectId;
    otherApi = other.api;
    own.push(...rows(projectId, 150, null));
    await insertEvents(clickhouse.client, clickhouse.database, [...own, ...rows(otherProjectId, 50, MARKER)]);
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  const hogql = (query: string, values?: Record<string, unknown>) => ({
    query: { kind: 'HogQLQuery', query, ...(values ? { values } : {}) },
  });

  const countsByEvent = (): [string, number][] => {
    const counts = new Map<string, number>();
    for (const row of own) counts.set(row.event, (counts.get(row.event) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => a.localeCompare(b));
  };

  it.each(['projects', 'environments'])('answers a HogQLQuery under /api/%s/:id/query/', async (prefix) => {
    const response = await api.post(`/api/${prefix}/${projectId}/query/`, {
      ...hogql('select event, count() as n from events group by event order by event'),
      refresh: 'force_blocking',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      results: countsByEvent(),
      columns: ['event', 'n'],
      types: [
        ['event', 'String'],
        ['n', 'UInt64'],
      ],
      hasMore: false,
      limit: 100,
      offset: 0,
      is_cached: false,
      timezone: 'UTC',
      query_status: null,
      error: null,
    });
    expect(typeof response.body.clickhouse).toBe('string');
    expect(response.body.hogql).toBe('select event, count() as n from events group by event order by event');
  });

  it("serves a recent answer from the cache, never another project's, and recomputes on force_blocking", async () => {
    const text = `select count() as n, '${randomUUID()}' as tag from events`;
    const first = await api.post(`/api/projects/${projectId}/query/`, hogql(text));
    expect(first.body).toMatchObject({ is_cached: false, results: [[own.length, expect.any(String)]] });
    const second = await api.post(`/api/environments/${projectId}/query/`, hogql(text));
    expect(second.body).toMatchObject({
      is_cached: true,
      cache_key: first.body.cache_key,
      last_refresh: first.body.last_refresh,
      results: first.body.results,
    });
    const forced = await api.post(`/api/projects/${projectId}/query/`, {
      ...hogql(text),
      refresh: 'force_blocking',
    });
    expect(forced.body.is_cached).toBe(false);
    // The same text in the other project: its own answer (50 events), not this one's.
    const other = await otherApi.post(`/api/projects/${otherProjectId}/query/`, hogql(text));
    expect(other.body).toMatchObject({ is_cached: false, results: [[50, expect.any(String)]] });
    expect(other.body.cache_key).not.toBe(first.body.cache_key);
  });

  it('runs an async query to poll, and a cached one answers at once with no query to poll', async () => {
    const text = `select event, count(), '${randomUUID()}' as tag from events group by event order by event`;
    const started = await api.post(`/api/projects/${projectId}/query/`, {
      ...hogql(text),
      refresh: 'force_async',
      client_query_id: `client-${randomUUID()}`,
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      is_cached: false,
      query_status: { complete: false, query_async: true },
    });
    const id = started.body.query_status.id as string;
    expect(id).toMatch(/^client-/);
    let status = await api.get(`/api/projects/${projectId}/query/${id}/`);
    for (let tries = 0; status.status === 202 && tries < 100; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = await api.get(`/api/projects/${projectId}/query/${id}/`);
    }
    expect(status.status).toBe(200);
    expect(status.body.query_status).toMatchObject({ id, complete: true, error: false });
    expect(status.body.query_status.results.map((row: unknown[]) => row.slice(0, 2))).toEqual(
      countsByEvent(),
    );
    expect((await api.delete(`/api/projects/${projectId}/query/${id}/`)).body).toEqual({
      message: 'Query has already finished.',
    });
    // Refreshed again in the background: the answer held so far comes back at once, with the new query_status.
    const refreshed = await api.post(`/api/projects/${projectId}/query/`, {
      ...hogql(text),
      refresh: 'force_async',
    });
    expect(refreshed.status).toBe(202);
    expect(refreshed.body).toMatchObject({
      is_cached: true,
      cache_key: started.body.cache_key,
      query_status: { complete: false, query_async: true },
    });
    expect(refreshed.body.results.map((row: unknown[]) => row.slice(0, 2))).toEqual(countsByEvent());
    // Another project cannot see or cancel it: the 404 of an unknown id.
    const foreign = await otherApi.get(`/api/projects/${otherProjectId}/query/${id}/`);
    expect(foreign.status).toBe(404);
    expect((await otherApi.delete(`/api/projects/${otherProjectId}/query/${id}/`)).status).toBe(404);
  });

  it('binds placeholders from values, and pages with LIMIT, OFFSET and hasMore', async () => {
    const filtered = await api.post(
      `/api/projects/${projectId}/query/`,
      hogql('select count() from events where event = {name} and properties.$browser = {browser}', {
        name: 'purchase',
        browser: 'Chrome',
      }),
    );
    expect(filtered.body.results).toEqual([
      [
        own.filter((row) => row.event === 'purchase' && JSON.parse(row.properties).$browser === 'Chrome')
          .length,
      ],
    ]);

    const byDefault = await api.post(`/api/projects/${projectId}/query/`, hogql('select uuid from events'));
    expect(byDefault.body.results).toHaveLength(100);
    expect(byDefault.body.hasMore).toBe(true);

    const sorted = own.map((row) => row.uuid).sort();
    const page = await api.post(
      `/api/projects/${projectId}/query/`,
      hogql('select toString(uuid) as id from events order by id limit 10 offset 140'),
    );
    expect(page.body.results).toEqual(sorted.slice(140, 150).map((id) => [id]));
    expect(page.body.hasMore).toBe(false);
  });

  it('returns date-times as ISO 8601 in UTC', async () => {
    const response = await api.post(
      `/api/projects/${projectId}/query/`,
      hogql('select min(timestamp) from events'),
    );
    expect(response.body.results).toEqual([['2025-03-01T10:00:00.000000Z']]);
  });

  it("is a 404 on another organization's project, exactly as on one that does not exist", async () => {
    const foreign = await api.post(`/api/projects/${otherProjectId}/query/`, hogql('select 1'));
    const unknown = await api.post(`/api/projects/999999999/query/`, hogql('select 1'));
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
  });

  it('needs query:read', async () => {
    const withoutScope = await testApp.createKey('owner@query.test', ['feature_flag:read']);
    const refused = await apiClient(testApp.baseUrl, `Bearer ${withoutScope}`).post(
      `/api/projects/${projectId}/query/`,
      hogql('select 1'),
    );
    expect(refused.status).toBe(403);
    const readOnly = await testApp.createKey('owner@query.test', ['query:read']);
    const allowed = await apiClient(testApp.baseUrl, `Bearer ${readOnly}`).post(
      `/api/projects/${projectId}/query/`,
      hogql('select 1'),
    );
    expect(allowed.status).toBe(200);
    expect(allowed.body.results).toEqual([[1]]);
  });

  it.each([
    [hogql('select * from system.tables'), 'query'],
    [hogql('select team_id from events'), 'query'],
    [hogql('select * from events where'), 'query'],
    [hogql("select * from url('http://127.0.0.1/', 'CSV')"), 'query'],
    [hogql('select {missing}'), 'query'],
    [{ query: { kind: 'HogQLQuery' } }, 'query__query'],
    [{ query: { kind: 'NoSuchQuery' } }, 'query__kind'],
    [{ query: { kind: 'TrendsQuery', series: [] } }, 'query__kind'],
    [{ query: 'select 1' }, 'query'],
    [{}, 'query'],
  ])('answers 400 naming the field for %j', async (body, attr) => {
    const response = await api.post(`/api/projects/${projectId}/query/`, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'validation_error', attr });
  });

  it.each([
    'select * from events',
    "select event, distinct_id from events where properties.marker = 'other-project-marker-q31' or 1 = 1",
    'select e.event from events e inner join events f on e.distinct_id = f.distinct_id limit 10000',
    'select event from (select event from events union all select event from events) as u limit 10000',
  ])("never answers with another project's events: %s", async (query) => {
    const response = await api.post(`/api/projects/${projectId}/query/`, hogql(query));
    expect(response.status).toBe(200);
    expect(response.body.results.length).toBeGreaterThan(0);
    expect(JSON.stringify(response.body.results)).not.toContain(MARKER);
  });
});
