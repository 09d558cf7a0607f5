import { randomUUID } from 'node:crypto';
import { insertEvents, type EventRow } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { ISO_8601_PATTERN } from '@hogbase/test-support';
import { ApiClient, followPages, ManagementTestApp, startManagementTestApp } from './management-test-app';

/**
 * The deprecated event listing over a real ClickHouse engine (chDB) and the app's Postgres:
 * events are written to the events table as ingestion writes them, persons as ingestion keeps them.
 */
describe('event listing', () => {
  let clickhouse: TestClickHouse;
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let projectId: number;
  let otherProjectId: number;
  let otherApi: ApiClient;
  let personPk: string;
  let personUuid: string;
  const otherProjectEvents: string[] = [];
  const base = `/api/projects`;
  const events = (query = '') => `${base}/${projectId}/events/${query ? `?${query}` : ''}`;
  const q = (params: Record<string, unknown>) =>
    new URLSearchParams(
      Object.entries(params).map(([key, value]): [string, string] => [
        key,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    ).toString();

  function row(teamId: number, overrides: Partial<EventRow> & { props?: Record<string, unknown> }): EventRow {
    const { props, ...rest } = overrides;
    return {
      uuid: randomUUID(),
      event: 'custom',
      properties: JSON.stringify(props ?? {}),
      timestamp: '2025-03-01 12:00:00.000000',
      team_id: teamId,
      distinct_id: 'anonymous-visitor',
      created_at: '2025-03-01 12:00:01.000000',
      person_id: randomUUID(),
      person_properties: '{}',
      ...rest,
    };
  }

  // Project events, newest first: the fixture the filter tests read.
  const fixture = [
    {
      event: '$pageview',
      distinct_id: 'alice',
      timestamp: '2025-03-05 10:00:00.000000',
      props: {
        $browser: 'Chrome',
        $current_url: 'https://shop.example/cart',
        price: 30,
        plan: 'pro',
        signed_up: '2025-02-01T00:00:00Z',
      },
      person_properties: '{"email":"alice@example.com","tier":"gold"}',
    },
    {
      event: 'purchase',
      distinct_id: 'alice',
      timestamp: '2025-03-04 10:00:00.000000',
      props: { $browser: 'Chrome', price: 120, plan: 'pro', coupon: null, signed_up: '2025-01-15' },
      person_properties: '{"email":"alice@example.com","tier":"gold"}',
    },
    {
      event: '$pageview',
      distinct_id: 'bob',
      timestamp: '2025-03-03 10:00:00.000000',
      props: {
        $browser: 'Firefox',
        $current_url: 'https://shop.example/',
        price: 5.5,
        signed_up: '2025-03-01',
      },
      person_properties: '{"email":"bob@example.org"}',
    },
    {
      event: 'purchase',
      distinct_id: 'bob',
      timestamp: '2025-03-02 10:00:00.000000',
      props: { $browser: 'Safari', price: 8, plan: 'free', tags: ['a', 'b'] },
      person_properties: '{}',
    },
    {
      event: '$autocapture',
      distinct_id: 'carol',
      timestamp: '2025-03-01 10:00:00.000000',
      props: { $browser: 'safari mobile', $event_type: 'click' },
      elements_chain:
        'button.btn.primary:attr__id="buy"attr_id="buy"nth-child="1"nth-of-type="2"text="Buy now";div.card:nth-child="3"nth-of-type="1"',
    },
  ];
  const fixtureIds: string[] = [];

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp({}, { clickhouse: { database: clickhouse.database } });
    const owner = await testApp.createOwner('owner@events.test');
    const other = await testApp.createOwner('owner@other-events.test');
    ({ api, projectId } = owner);
    ({ api: otherApi, projectId: otherProjectId } = other);

    const rows = fixture.map(({ props, ...rest }) => row(projectId, { ...rest, props }));
    fixtureIds.push(...rows.map((event) => event.uuid));
    // The other project: same names, same distinct ids, same properties. None may ever show up.
    const otherRows = fixture.map(({ props, ...rest }) => row(otherProjectId, { ...rest, props }));
    otherProjectEvents.push(...otherRows.map((event) => event.uuid));
    await insertEvents(clickhouse.client, clickhouse.database, [...rows, ...otherRows]);

    // Alice is identified and has two distinct ids; bob has a person too; carol has none.
    const [alice] = await testApp.dataSource.query<{ id: string; uuid: string }[]>(
      `INSERT INTO persons (uuid, team_id, properties, is_identified)
       VALUES ($1, $2, '{"email":"alice@example.com","name":"Alice"}', true) RETURNING id, uuid`,
      [randomUUID(), projectId],
    );
    const [bob] = await testApp.dataSource.query<{ id: string }[]>(
      `INSERT INTO persons (uuid, team_id, properties) VALUES ($1, $2, '{}') RETURNING id`,
      [randomUUID(), projectId],
    );
    await testApp.dataSource.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'alice', $2), ($1, 'alice-device', $2), ($1, 'bob', $3)`,
      [projectId, alice.id, bob.id],
    );
    personPk = String(alice.id);
    personUuid = alice.uuid;
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  const ids = (body: { results: { id: string }[] }) => body.results.map((event) => event.id);

  describe('GET /events/', () => {
    it('lists the project events newest first as PostHog event records, with their person', async () => {
      const response = await api.get(events());
      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['next', 'results']);
      expect(response.body.next).toBeNull();
      expect(ids(response.body)).toEqual(fixtureIds);
      const [pageview, , , , autocapture] = response.body.results;
      expect(pageview).toEqual({
        id: fixtureIds[0],
        distinct_id: 'alice',
        properties: fixture[0].props,
        event: '$pageview',
        timestamp: '2025-03-05T10:00:00.000000+00:00',
        person: {
          is_identified: true,
          distinct_ids: ['alice', 'alice-device'],
          properties: { email: 'alice@example.com', name: 'Alice' },
        },
        elements: [],
        elements_chain: '',
      });
      expect(pageview.timestamp).toMatch(ISO_8601_PATTERN);
      expect(autocapture.person).toBeNull();
      expect(autocapture.elements.map((element: { tag_name: string }) => element.tag_name)).toEqual([
        'button',
        'div',
      ]);
      expect(autocapture.elements[0]).toMatchObject({
        text: 'Buy now',
        attr_id: 'buy',
        attr_class: ['btn', 'primary'],
        nth_of_type: 2,
        order: 0,
      });
    });

    it('filters by event name, distinct id and person (id or UUID)', async () => {
      expect(ids((await api.get(events(q({ event: 'purchase' })))).body)).toEqual([
        fixtureIds[1],
        fixtureIds[3],
      ]);
      expect(ids((await api.get(events(q({ distinct_id: 'bob' })))).body)).toEqual([
        fixtureIds[2],
        fixtureIds[3],
      ]);
      for (const person of [personPk, personUuid]) {
        expect(ids((await api.get(events(q({ person_id: person })))).body)).toEqual([
          fixtureIds[0],
          fixtureIds[1],
        ]);
      }
      for (const unknown of ['999999', randomUUID(), 'not-a-person']) {
        const response = await api.get(events(q({ person_id: unknown })));
        expect([response.status, response.body]).toEqual([200, { next: null, results: [] }]);
      }
    });

    it('bounds by after and before, absolute or relative', async () => {
      expect(
        ids(
          (await api.get(events(q({ after: '2025-03-02T10:00:00Z', before: '2025-03-05T10:00:00Z' })))).body,
        ),
      ).toEqual([fixtureIds[1], fixtureIds[2]]);
      expect(ids((await api.get(events(q({ after: '2025-03-04' })))).body)).toEqual([
        fixtureIds[0],
        fixtureIds[1],
      ]);
      expect(ids((await api.get(events(q({ before: '2025-03-01 11:00:00+01:00' })))).body)).toEqual([]);
      expect(ids((await api.get(events(q({ after: '-1d' })))).body)).toEqual([]);
      expect(
        ids(
          (
            await api.get(
              events(q({ after: '-36500d', event: ['$pageview', 'purchase', '$autocapture'].join() })),
            )
          ).body,
        ),
      ).toEqual([]);
      expect(ids((await api.get(events(q({ after: '-3650d', before: '2025-03-06' })))).body)).toEqual(
        fixtureIds,
      );
    });

    it('pages with limit and offset', async () => {
      const page = await api.get(events(q({ limit: '2', offset: '1' })));
      expect(ids(page.body)).toEqual(fixtureIds.slice(1, 3));
      expect(page.body.next).toContain('cursor=');
      expect(page.body.next).not.toContain('offset=');
      expect(ids((await api.get(events(q({ offset: 'bad' })))).body)).toEqual(fixtureIds);
      expect(ids((await api.get(events(q({ orderBy: ['timestamp'] })))).body)).toEqual(
        [...fixtureIds].reverse(),
      );
    });

    describe('properties filters', () => {
      const cases: [string, unknown, number[]][] = [
        ['exact', [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }], [0, 1]],
        [
          'exact (default operator, list of values)',
          [{ key: '$browser', value: ['Firefox', 'Safari'] }],
          [2, 3],
        ],
        ['exact on a number', [{ key: 'price', value: 8 }], [3]],
        ['is_not', [{ key: '$browser', value: 'Chrome', operator: 'is_not' }], [2, 3, 4]],
        ['icontains', [{ key: '$browser', value: 'SAFARI', operator: 'icontains' }], [3, 4]],
        ['not_icontains', [{ key: '$current_url', value: 'cart', operator: 'not_icontains' }], [1, 2, 3, 4]],
        ['regex', [{ key: '$current_url', value: '^https://shop\\.example/$', operator: 'regex' }], [2]],
        ['not_regex', [{ key: '$browser', value: '^(Chrome|Safari)$', operator: 'not_regex' }], [2, 4]],
        ['gt', [{ key: 'price', value: 8, operator: 'gt' }], [0, 1]],
        ['gte', [{ key: 'price', value: '8', operator: 'gte' }], [0, 1, 3]],
        ['lt', [{ key: 'price', value: 30, operator: 'lt' }], [2, 3]],
        ['lte', [{ key: 'price', value: 30, operator: 'lte' }], [0, 2, 3]],
        ['is_set', [{ key: 'plan', operator: 'is_set' }], [0, 1, 3]],
        ['is_set (null value)', [{ key: 'coupon', operator: 'is_set' }], [1]],
        ['is_not_set', [{ key: 'plan', operator: 'is_not_set' }], [2, 4]],
        ['is_date_before', [{ key: 'signed_up', value: '2025-02-15', operator: 'is_date_before' }], [0, 1]],
        ['is_date_after', [{ key: 'signed_up', value: '2025-02-15', operator: 'is_date_after' }], [2]],
        ['person property', [{ key: 'tier', value: 'gold', operator: 'exact', type: 'person' }], [0, 1]],
        [
          'person property icontains',
          [{ key: 'email', value: 'EXAMPLE.ORG', operator: 'icontains', type: 'person' }],
          [2],
        ],
        [
          'AND of two filters',
          [
            { key: '$browser', value: 'Chrome' },
            { key: 'price', value: 100, operator: 'gt' },
          ],
          [1],
        ],
        [
          'OR group',
          {
            type: 'OR',
            values: [
              { key: 'plan', value: 'free' },
              { key: '$event_type', value: 'click' },
            ],
          },
          [3, 4],
        ],
        ['legacy object with operator suffix', { $browser__icontains: 'fire' }, [2]],
        ['a filter on a missing property', [{ key: 'nope', value: 'x' }], []],
        ['hogql filter', [{ key: 'properties.price * 2 > 100', type: 'hogql' }], [1]],
      ];
      it.each(cases)('%s', async (_name, properties, expected) => {
        const response = await api.get(events(q({ properties })));
        expect(response.status).toBe(200);
        expect(ids(response.body)).toEqual(expected.map((index) => fixtureIds[index]));
      });

      it('refuses unparsable JSON, unsupported filter types and bad values with a 400 naming properties', async () => {
        for (const properties of [
          '{not json',
          JSON.stringify([{ key: 'x', type: 'cohort', value: 3 }]),
          JSON.stringify([{ key: 'x', value: '(', operator: 'regex' }]),
          JSON.stringify([{ key: 'x', value: 'someday', operator: 'is_date_after' }]),
        ]) {
          const response = await api.get(events(`properties=${encodeURIComponent(properties)}`));
          expect([response.status, response.body.type, response.body.attr]).toEqual([
            400,
            'validation_error',
            'properties',
          ]);
          expect(response.body.detail).toEqual(expect.any(String));
        }
      });
    });

    describe('HogQL select and where', () => {
      it('returns the selected expressions as rows, with columns and types', async () => {
        const response = await api.get(
          events(
            q({
              select: ['event', 'properties.price', 'person.properties.email AS email'],
              where: ["distinct_id = 'alice'"],
            }),
          ),
        );
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          next: null,
          columns: ['event', 'properties.price', 'person.properties.email AS email'],
          types: [expect.any(String), expect.any(String), expect.any(String)],
          results: [
            ['$pageview', '30', 'alice@example.com'],
            ['purchase', '120', 'alice@example.com'],
          ],
        });
      });

      it('groups by the other columns when one aggregates, and pages groups by offset', async () => {
        const all = await api.get(events(q({ select: ['event', 'count()'] })));
        expect(all.body.results).toEqual([
          ['$autocapture', '1'],
          ['$pageview', '2'],
          ['purchase', '2'],
        ]);
        const first = await api.get(events(q({ select: ['event', 'count()'], limit: '2' })));
        expect(first.body.results).toHaveLength(2);
        const second = await api.get(new URL(first.body.next).pathname + new URL(first.body.next).search);
        expect(second.body.results).toEqual([['purchase', '2']]);
        expect(second.body.next).toBeNull();
      });

      it('shows * as an object per event', async () => {
        const response = await api.get(
          events(q({ select: ['*'], where: ["event = 'purchase'"], limit: '1' })),
        );
        expect(response.body.results[0][0]).toMatchObject({
          uuid: fixtureIds[1],
          event: 'purchase',
          distinct_id: 'alice',
          properties: fixture[1].props,
          person: { properties: { email: 'alice@example.com', tier: 'gold' } },
        });
      });

      it('applies where conditions', async () => {
        const response = await api.get(
          events(q({ where: ['toFloat(properties.price) >= 30', "event != '$pageview'"] })),
        );
        expect(ids(response.body)).toEqual([fixtureIds[1]]);
      });

      it.each([
        ['select', ['team_id'], 'team_id'],
        ['select', ['(SELECT 1)'], ''],
        ['select', ["file('/etc/passwd')"], 'file'],
        ['select', ['event FROM events'], ''],
        ['where', ['1 = 1; DROP TABLE events'], ''],
        ['where', ['count() > 1'], ''],
        ['where', ['team_id = 1'], 'team_id'],
        ['where', ["event = 'x' OR 1"], ''],
        ['where', ['unknownFunction(event)'], 'unknownFunction'],
        ['select', [42], ''],
      ])('refuses %s %j with a 400 naming it', async (attr, expressions, mentioned) => {
        const response = await api.get(events(q({ [attr]: expressions })));
        if (attr === 'where' && expressions[0] === "event = 'x' OR 1") {
          // A valid condition (1 is true): not an error, and still only this project's events.
          expect(response.status).toBe(200);
          expect(ids(response.body)).toEqual(fixtureIds);
          return;
        }
        expect([response.status, response.body.type, response.body.attr]).toEqual([
          400,
          'validation_error',
          attr,
        ]);
        expect(response.body.detail).toContain(mentioned);
      });

      it('refuses a select or where that is not a JSON array of strings', async () => {
        for (const query of ['select=event', 'where=%7B%7D', 'select=%5B1%5D']) {
          const response = await api.get(events(query));
          expect(response.status).toBe(400);
        }
      });
    });

    it('writes CSV with flattened columns and no next link', async () => {
      const response = await api.request('GET', events(q({ format: 'csv', event: 'purchase' })));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
      const [header, ...lines] = (response.body as string).trimEnd().split('\r\n');
      const columns = header.split(',');
      expect(columns).toEqual([...columns].sort());
      expect(columns).toEqual(
        expect.arrayContaining([
          'id',
          'event',
          'properties.price',
          'properties.tags.0',
          'person.distinct_ids.0',
          'timestamp',
        ]),
      );
      expect(lines).toHaveLength(2);
      expect(lines[0]).toContain(fixtureIds[1]);
      const viaAccept = await api.request('GET', events(q({ event: 'purchase' })), {
        headers: { Accept: 'text/csv' },
      });
      expect(viaAccept.body).toBe(response.body);
    });

    it('refuses bad parameters with a 400 naming them', async () => {
      for (const [query, attr] of [
        ['format=xml', 'format'],
        ['limit=abc', 'limit'],
        ['limit=0', 'limit'],
        ['after=yesterday-ish', 'after'],
        ['before=2025-13-45', 'before'],
        ['cursor=garbage', 'cursor'],
        ['orderBy=%5B%22event%22%5D', 'orderBy'],
        ['event=a&event=b', 'event'],
      ]) {
        const response = await api.get(events(query));
        expect({ query, status: response.status, attr: response.body.attr }).toEqual({
          query,
          status: 400,
          attr,
        });
      }
    });
  });

  describe('cursor pagination', () => {
    let burst: string[];
    const burstTimestamp = '2025-04-01 08:00:00.000000';

    beforeAll(async () => {
      // 23 events in the same microsecond, plus neighbours either side.
      const rows = Array.from({ length: 23 }, () =>
        row(projectId, { event: 'burst', timestamp: burstTimestamp }),
      );
      rows.push(row(projectId, { event: 'burst', timestamp: '2025-04-01 08:00:00.000001' }));
      rows.push(row(projectId, { event: 'burst', timestamp: '2025-04-01 07:59:59.999999' }));
      await insertEvents(clickhouse.client, clickhouse.database, rows);
      // Redelivered: the same rows again must not show twice.
      await insertEvents(clickhouse.client, clickhouse.database, rows.slice(0, 5));
      burst = rows.map((event) => event.uuid);
    });

    async function collect(first: string): Promise<{ ids: string[]; pages: number }> {
      const { results, pages } = await followPages<{ id: string }>(api, first, 19);
      return { ids: ids({ results }), pages };
    }

    it.each([
      ['newest first', {}],
      ['oldest first', { orderBy: ['timestamp'] }],
    ])('neither skips nor repeats an event over equal timestamps (%s)', async (_name, order) => {
      const { ids: seen, pages } = await collect(events(q({ event: 'burst', limit: '4', ...order })));
      expect(pages).toBe(7);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...burst].sort());
      expect(seen[0]).toBe(burst[order === undefined || !('orderBy' in order) ? 23 : 24]);
    });

    it('keeps the other parameters on the next link', async () => {
      const page = await api.get(events(q({ event: 'burst', limit: '5', where: ['1 = 1'] })));
      const next = new URL(page.body.next);
      expect(next.searchParams.get('event')).toBe('burst');
      expect(next.searchParams.get('limit')).toBe('5');
      expect(next.searchParams.get('where')).toBe('["1 = 1"]');
    });

    it('pages a non-aggregating select by cursor too', async () => {
      const { results } = await followPages<string[]>(
        api,
        events(q({ event: 'burst', select: ['uuid'], limit: '6' })),
        100,
      );
      const seen = results.map((result) => result[0]);
      expect([...seen].sort()).toEqual([...burst].sort());
    });
  });

  describe('GET /events/:id/', () => {
    it('returns one event record', async () => {
      const response = await api.get(`${base}/${projectId}/events/${fixtureIds[1]}/`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: fixtureIds[1], event: 'purchase', distinct_id: 'alice' });
      expect(response.body.person.is_identified).toBe(true);
    });

    it('answers 400 Invalid UUID to an id that is not a UUID', async () => {
      const response = await api.get(`${base}/${projectId}/events/not-a-uuid/`);
      expect([response.status, response.body]).toEqual([
        400,
        { type: 'validation_error', code: 'invalid', detail: 'Invalid UUID', attr: null },
      ]);
    });

    it("answers 404 alike to an unknown id and to another project's event", async () => {
      const unknown = randomUUID();
      const missing = await api.get(`${base}/${projectId}/events/${unknown}/`);
      expect([missing.status, missing.body.detail]).toEqual([
        404,
        `No events exist for event UUID ${unknown}`,
      ]);
      const foreign = await api.get(`${base}/${projectId}/events/${otherProjectEvents[0]}/`);
      expect([foreign.status, foreign.body.detail]).toEqual([
        404,
        `No events exist for event UUID ${otherProjectEvents[0]}`,
      ]);
    });

    it("answers 404 to another organization's project", async () => {
      const response = await otherApi.get(`${base}/${projectId}/events/${fixtureIds[0]}/`);
      expect(response.status).toBe(404);
    });
  });

  describe('GET /events/values/', () => {
    beforeAll(async () => {
      const now = new Date().toISOString().replace('T', ' ').replace('Z', '000');
      await insertEvents(clickhouse.client, clickhouse.database, [
        row(projectId, { event: 'signup', timestamp: now, props: { plan: 'pro', color: 'dark blue' } }),
        row(projectId, { event: 'signup', timestamp: now, props: { plan: 'free', color: 'blue' } }),
        row(projectId, { event: 'upgrade', timestamp: now, props: { plan: 'enterprise', tags: ['x', 'y'] } }),
        row(otherProjectId, { event: 'secret-event', timestamp: now, props: { plan: 'secret-plan' } }),
      ]);
    });

    it('requires a key', async () => {
      const response = await api.get(`${base}/${projectId}/events/values/`);
      expect([response.status, response.body.detail]).toEqual([400, 'You must provide a key']);
    });

    it("lists the project's own event names for key=custom_event", async () => {
      const response = await api.get(`${base}/${projectId}/events/values/?key=custom_event`);
      expect(response.body).toEqual([
        { name: 'burst' },
        { name: 'purchase' },
        { name: 'signup' },
        { name: 'upgrade' },
      ]);
    });

    it('lists recent values of a property, narrowed by value and event name', async () => {
      const all = await api.get(`${base}/${projectId}/events/values/?key=plan`);
      expect(all.headers.get('cache-control')).toBe('max-age=10');
      expect(all.body.map((value: { name: string }) => value.name).sort()).toEqual([
        'enterprise',
        'free',
        'pro',
      ]);
      const narrowed = await api.get(`${base}/${projectId}/events/values/?key=color&value=BLUE`);
      expect(narrowed.body).toEqual([{ name: 'blue' }, { name: 'dark blue' }]);
      const byEvent = await api.get(
        `${base}/${projectId}/events/values/?key=plan&event_name=upgrade&event_name=nothing`,
      );
      expect(byEvent.body).toEqual([{ name: 'enterprise' }]);
      const flattened = await api.get(`${base}/${projectId}/events/values/?key=tags`);
      expect(flattened.body).toEqual([{ name: 'x' }, { name: 'y' }]);
      const literal = await api.get(`${base}/${projectId}/events/values/?key=plan&value=%25`);
      expect(literal.body).toEqual([]);
    });

    it('reads an event column with is_column=true and refuses unknown columns', async () => {
      const response = await api.get(
        `${base}/${projectId}/events/values/?key=event&is_column=true&value=sign`,
      );
      expect(response.body).toEqual([{ name: 'signup' }]);
      const refused = await api.get(`${base}/${projectId}/events/values/?key=team_id&is_column=true`);
      expect(refused.status).toBe(400);
    });
  });

  it('needs the query:read scope', async () => {
    const key = await testApp.createKey('owner@events.test', ['project:read']);
    const response = await testApp.client(`Bearer ${key}`).get(events());
    expect([response.status, response.body.detail]).toEqual([
      403,
      "API key missing required scope 'query:read'",
    ]);
    const allowed = await testApp
      .client(`Bearer ${await testApp.createKey('owner@events.test', ['query:read'])}`)
      .get(events());
    expect(allowed.status).toBe(200);
  });
});
