import { randomUUID } from 'node:crypto';
import { insertEvents, type EventRow } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import {
  generateExpression,
  generateHostileExpression,
  generatePropertyFilter,
  seededRandom,
} from '@hogbase/hogql/testing';
import { ApiClient, ManagementTestApp, startManagementTestApp } from './management-test-app';

/**
 * Fuzz: generated and hostile `select`, `where` and `properties` values sent to the listing of one
 * project must never return a row of another project, and never end in a 5xx. The other project's
 * events carry markers (uuids, a distinct id, property values) that appear nowhere in this one's.
 */
describe('event listing isolation (fuzz)', () => {
  const SEED = 20261122;
  const ROUNDS = 120;
  const OTHER_MARKER = 'other-project-marker-7f3a';
  let clickhouse: TestClickHouse;
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let projectId: number;
  const ownIds = new Set<string>();
  const otherIds: string[] = [];

  function rows(teamId: number, marker: string | null): EventRow[] {
    return Array.from({ length: 40 }, (_, index) => ({
      uuid: randomUUID(),
      event: ['$pageview', 'purchase', 'signup', '$autocapture'][index % 4],
      properties: JSON.stringify({
        $browser: ['Chrome', 'Firefox', 'Safari'][index % 3],
        price: index * 1.5,
        nested: { a: { b: index } },
        'weird key': index % 2 === 0 ? 'x' : null,
        date: `2025-03-${String((index % 28) + 1).padStart(2, '0')}`,
        flag: index % 2 === 0,
        ...(marker ? { marker, [`${marker}-key`]: marker } : {}),
      }),
      timestamp: `2025-03-${String((index % 28) + 1).padStart(2, '0')} 10:00:00.000000`,
      team_id: teamId,
      distinct_id: marker ? `${marker}-user-${index % 5}` : `user-${index % 5}`,
      created_at: '2025-03-29 00:00:00.000000',
      person_id: randomUUID(),
      person_properties: JSON.stringify(
        marker ? { email: `${marker}@example.com` } : { email: 'own@example.com' },
      ),
      elements_chain: marker ? `a.${marker}:text="${marker}"` : 'a.own:text="own"',
    }));
  }

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    const owner = await testApp.createOwner('owner@fuzz.test');
    const other = await testApp.createOwner('owner@other-fuzz.test');
    ({ api, projectId } = owner);
    const own = rows(projectId, null);
    const foreign = rows(other.projectId, OTHER_MARKER);
    own.forEach((event) => ownIds.add(event.uuid));
    otherIds.push(...foreign.map((event) => event.uuid));
    await insertEvents(clickhouse.client, clickhouse.database, [...own, ...foreign]);
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  const listing = (params: Record<string, unknown>) =>
    `/api/projects/${projectId}/events/?${new URLSearchParams(
      Object.entries(params).map(([key, value]): [string, string] => [key, JSON.stringify(value)]),
    ).toString()}&after=2025-01-01`;

  /**
   * Fails on a 5xx or on anything of the other project in the body, except `echoed`: text the
   * request itself sent, which an error message may quote back.
   */
  function check(label: string, status: number, body: unknown, echoed?: string): void {
    const text = JSON.stringify(body);
    const leaked = [OTHER_MARKER, ...otherIds].filter(
      (secret) => !echoed?.includes(secret) && text.includes(secret),
    );
    expect({ label, status: status < 500, leaked }).toEqual({ label, status: true, leaked: [] });
    if (status === 200 && Array.isArray((body as { results?: unknown }).results)) {
      for (const result of (body as { results: unknown[] }).results) {
        if (result && typeof result === 'object' && !Array.isArray(result) && 'id' in result) {
          expect(ownIds.has(String(result.id))).toBe(true);
        }
      }
    }
  }

  it('answers the whole project with a 200 baseline', async () => {
    const response = await api.get(listing({ select: ['count()'] }));
    expect(response.body.results).toEqual([['40']]);
  });

  it('never leaks another project through generated or hostile select/where', async () => {
    const random = seededRandom(SEED);
    let accepted = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const expression = random() < 0.5 ? generateExpression(random) : generateHostileExpression(random);
      for (const params of [
        { where: [expression] },
        { select: [expression, 'uuid'] },
        { select: [expression] },
      ]) {
        const response = await api.get(listing(params));
        check(`${JSON.stringify(params)} (seed ${SEED}, round ${round})`, response.status, response.body);
        if (response.status === 200) accepted += 1;
      }
    }
    // The generator is meant to reach ClickHouse: most well-formed expressions compile.
    expect(accepted).toBeGreaterThan(ROUNDS / 4);
  });

  it('never leaks another project through generated property filters', async () => {
    const random = seededRandom(SEED + 1);
    for (let round = 0; round < ROUNDS; round += 1) {
      const properties = generatePropertyFilter(random);
      const response = await api.get(listing({ properties }));
      check(
        `properties ${JSON.stringify(properties)} (seed ${SEED + 1}, round ${round})`,
        response.status,
        response.body,
      );
    }
  });

  it('never leaks another project through the other parameters', async () => {
    const hostile = [
      "' OR 1=1 --",
      `${OTHER_MARKER}-user-1`,
      "x') OR team_id != 0 OR ('",
      '\\',
      '%',
      '*',
      otherIds[0],
      '{team_id:Int64}',
    ];
    for (const value of hostile) {
      for (const name of ['event', 'distinct_id', 'person_id', 'after', 'before', 'cursor', 'orderBy']) {
        const response = await api.get(
          `/api/projects/${projectId}/events/?${new URLSearchParams({ [name]: value }).toString()}`,
        );
        check(`${name}=${value}`, response.status, response.body, value);
      }
      const values = await api.get(
        `/api/projects/${projectId}/events/values/?${new URLSearchParams({ key: value, value }).toString()}`,
      );
      check(`values key=${value}`, values.status, values.body, value);
      const retrieve = await api.get(`/api/projects/${projectId}/events/${encodeURIComponent(value)}/`);
      check(`retrieve ${value}`, retrieve.status, retrieve.body, value);
      expect(retrieve.status).not.toBe(200);
    }
    const values = await api.get(`/api/projects/${projectId}/events/values/?key=marker`);
    expect(values.body).toEqual([]);
  });
});
