import { Client, Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import { closeClickHouse, openClickHouse, readEvents } from '@hogbase/clickhouse';
import {
  createTestClickHouse,
  testClickHouseDataPath,
  type TestClickHouse,
} from '@hogbase/clickhouse/testing';
import { DEAD_LETTER_TOPIC, EVENTS_TOPIC, partitionKey, type CapturedEvent } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import {
  InProcessBus,
  DEAD_LETTER_HEAD_BYTES,
  DEAD_LETTER_REASON_HEADER,
  DEAD_LETTER_SOURCE_OFFSET_HEADER,
  DEAD_LETTER_TRUNCATED_HEADER,
  DEAD_LETTER_VALUE_BYTES_HEADER,
  ensureTopics,
  KafkaEventConsumer,
  KafkaEventPublisher,
  decodedInCall,
  type ConsumedMessage,
  type DecodedBatch,
} from '@hogbase/queue';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { PersonProcessor } from '../persons/person-processor.service';
import { EventBatchHandler, type DecodedEvent, type EventBatchHandlerOptions } from './event-batch.handler';
import { IngestedEventMarker } from './ingested-event.marker';
import { TeamTokenCache } from './team-token.cache';

describe('EventBatchHandler', () => {
  let database: TestDatabase;
  let pool: Pool;
  let clickhouse: TestClickHouse;
  let deadLetterBus: InProcessBus;
  const deadLetters: ConsumedMessage[] = [];
  let handler: EventBatchHandler;
  let teamId: number;
  let otherTeamId: number;
  let offset = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.query(
      `INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-4000-8000-0000000000aa', 'Org', 'org')`,
    );
    [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token)
       VALUES ('00000000-0000-4000-8000-0000000000bb', '00000000-0000-4000-8000-0000000000aa', 'Web', 'phc_t') RETURNING id`,
    );
    [{ id: otherTeamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token)
       VALUES ('00000000-0000-4000-8000-0000000000cc', '00000000-0000-4000-8000-0000000000aa', 'Other', 'phc_other')
       RETURNING id`,
    );
    await dataSource.destroy();
    pool = new Pool({ connectionString: database.url, max: 2 });
    clickhouse = await createTestClickHouse();
    deadLetterBus = new InProcessBus({ topics: [DEAD_LETTER_TOPIC] });
    await deadLetterBus.start((batch) => {
      deadLetters.push(...batch.messages);
      return Promise.resolve();
    });
    handler = handlerWith();
  });

  /** A handler on this spec's Postgres and ClickHouse, with `options` over the defaults. */
  function handlerWith(options: Partial<EventBatchHandlerOptions> = {}): EventBatchHandler {
    return new EventBatchHandler({
      persons: new PersonProcessor(pool),
      events: clickhouse.events,
      deadLetters: deadLetterBus,
      tokens: new TeamTokenCache(pool),
      ingestedEvents: new IngestedEventMarker(pool, pino({ level: 'silent' })),
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
      ...options,
    });
  }

  afterAll(async () => {
    await deadLetterBus?.stop();
    await pool?.end();
    await clickhouse?.drop();
    await database?.drop();
  });

  function captured(
    event: string,
    distinctId: string,
    properties: Record<string, unknown> = {},
    timestamp = new Date().toISOString(),
  ): CapturedEvent {
    const uuid = crypto.randomUUID();
    return {
      uuid,
      distinct_id: distinctId,
      ip: null,
      data: JSON.stringify({ event, distinct_id: distinctId, uuid, properties }),
      now: new Date().toISOString(),
      sent_at: null,
      token: 'phc_t',
      team_id: teamId,
      event,
      timestamp,
    };
  }

  /** A batch as a Kafka consumer delivers it: each message decoded in the call. */
  function batchOf(values: (CapturedEvent | string)[]): DecodedBatch<DecodedEvent> {
    return decodedInCall(
      {
        topic: EVENTS_TOPIC,
        partition: 0,
        messages: values.map((value) => ({
          key: typeof value === 'string' ? null : partitionKey(value.team_id, value.distinct_id),
          value: typeof value === 'string' ? value : JSON.stringify(value),
          headers: {},
          offset: String(offset++),
        })),
      },
      (message) => handler.decode(message),
    );
  }

  it('writes persons to Postgres and rows to ClickHouse, dead-lettering what cannot be processed', async () => {
    const identify = captured('$identify', 'user-1', { $set: { email: 'one@example.com' } });
    const pageview = captured('$pageview', 'user-1', { $current_url: 'https://example.com/' });
    const farFuture = captured('far future', 'user-1', {}, '3000-01-01T00:00:00.000Z');
    await handler.handle(batchOf([identify, '{not json', pageview, farFuture]));

    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    expect(rows.map((row) => row.event).sort()).toEqual(['$identify', '$pageview']);
    const stored = rows.find((row) => row.event === '$pageview')!;
    expect(JSON.parse(stored.person_properties)).toMatchObject({ email: 'one@example.com' });
    expect(JSON.parse(stored.properties)).toMatchObject({ $current_url: 'https://example.com/' });
    const persons = await pool.query(`SELECT properties FROM persons WHERE team_id = $1`, [teamId]);
    expect(persons.rows).toEqual([{ properties: expect.objectContaining({ email: 'one@example.com' }) }]);

    expect(
      deadLetters.map((message) => message.headers[DEAD_LETTER_REASON_HEADER].split(':')[0]).sort(),
    ).toEqual(['invalid_json', 'invalid_timestamp']);
  });

  it('writes lone surrogates of the event name and element texts as U+FFFD instead of failing the insert', async () => {
    const event = captured('\ud800 clicked', 'user-surrogate', {
      $elements: [{ tag_name: 'button', $el_text: 'Buy \udfff' }],
    });
    await handler.handle(batchOf([event]));
    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    const stored = rows.find((row) => row.uuid === event.uuid);
    expect(stored?.event).toBe('\uFFFD clicked');
    expect(stored?.elements_chain).toContain('Buy \uFFFD');
  });

  it('dead-letters the rows ClickHouse refuses for their content and writes the rest of the batch', async () => {
    deadLetters.length = 0;
    const before = captured('before refused', 'user-refused');
    const refused = captured('refused', 'user-refused');
    const after = captured('after refused', 'user-refused');
    const batch = batchOf([before, refused, after]);
    // A value ClickHouse cannot store: `_offset` is UInt64, and this offset is no number.
    batch.messages[1].offset = 'not-a-number';
    await handler.handle(batch);

    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    const events = rows.map((row) => row.event);
    expect(events).toEqual(expect.arrayContaining(['before refused', 'after refused']));
    expect(events).not.toContain('refused');
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0].headers[DEAD_LETTER_REASON_HEADER]).toMatch(/^clickhouse_rejected: CANNOT_PARSE/);
    expect(JSON.parse(deadLetters[0].value).uuid).toBe(refused.uuid);
  });

  it('stores a redelivered batch once', async () => {
    const batch = batchOf([captured('redelivered', 'user-2'), captured('redelivered', 'user-3')]);
    await handler.handle(batch);
    await handler.handle(batch);
    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    expect(rows.filter((row) => row.event === 'redelivered')).toHaveLength(2);
    const distinctIds = await pool.query(
      `SELECT count(*)::int AS count FROM person_distinct_ids WHERE distinct_id IN ('user-2', 'user-3')`,
    );
    expect(distinctIds.rows[0].count).toBe(2);
  });

  it('writes an alias row with the person the ids end up on: the alias’s, which survives', async () => {
    const anonymous = captured('$pageview', 'anon-5', { $set: { shared: 'anon', from_anon: true } });
    const user = captured('login', 'user-5', { $set: { shared: 'user' } });
    await handler.handle(batchOf([anonymous, user]));
    const alias = captured('$create_alias', 'anon-5', { alias: 'user-5' });
    await handler.handle(batchOf([alias]));

    const { rows: persons } = await pool.query<{ uuid: string; distinct_ids: string[] }>(
      `SELECT p.uuid, array_agg(d.distinct_id ORDER BY d.distinct_id) AS distinct_ids
         FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
        WHERE p.team_id = $1 AND d.distinct_id IN ('anon-5', 'user-5') GROUP BY p.uuid`,
      [teamId],
    );
    expect(persons).toEqual([{ uuid: expect.any(String), distinct_ids: ['anon-5', 'user-5'] }]);
    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    const byUuid = (uuid: string) => rows.find((row) => row.uuid === uuid)!;
    expect(byUuid(user.uuid).person_id).toBe(persons[0].uuid);
    expect(byUuid(alias.uuid)).toMatchObject({ distinct_id: 'anon-5', person_id: persons[0].uuid });
    expect(JSON.parse(byUuid(alias.uuid).person_properties)).toMatchObject({
      shared: 'user',
      from_anon: true,
    });
  });

  it('uses what was decoded of a message ahead of its call, and decodes it anew when delivered again', async () => {
    const batch = batchOf([captured('prepared', 'user-6', { $set: { ready: true } })]);
    const [message] = batch.messages;
    const ahead = handler.decode(message);
    // Not read again: the call takes what was decoded ahead.
    message.value = '{not json';
    deadLetters.length = 0;
    await handler.handle({ ...batch, decoded: () => [ahead] });
    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    const stored = rows.filter((row) => row.event === 'prepared');
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0].person_properties)).toMatchObject({ ready: true });
    expect(deadLetters).toEqual([]);

    // Delivered again, the same message object is decoded anew: what was decoded ahead served once.
    await handler.handle(batch);
    expect(deadLetters.map((dead) => dead.headers[DEAD_LETTER_REASON_HEADER].split(':')[0])).toEqual([
      'invalid_json',
    ]);
  });

  it('parses again an event an app changed in place after it was decoded ahead', async () => {
    const transforming = handlerWith({
      transformations: {
        transformationTeams: () => Promise.resolve(new Set([teamId])),
        transform: (event) => {
          const data = JSON.parse(event.data) as { properties: Record<string, unknown> };
          data.properties.transformed = true;
          event.data = JSON.stringify(data);
          return Promise.resolve(event);
        },
      },
    });
    const batch = batchOf([captured('transformed in place', 'user-7', { plain: 1 })]);
    const ahead = transforming.decode(batch.messages[0]);
    await transforming.handle({ ...batch, decoded: () => [ahead] });
    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    const stored = rows.find((row) => row.event === 'transformed in place')!;
    expect(JSON.parse(stored.properties)).toMatchObject({ plain: 1, transformed: true });
  });

  it('stores properties nested as deep as capture takes, and dead-letters nesting it cannot serialise as such', async () => {
    // Capture takes 127 arrays and objects with the body (serde_json's limit, as rust/capture):
    // a single event's properties then hold 125 more. Written as text: the test's own
    // JSON.stringify would run out of stack on the deeper one.
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const deepest = captured('deepest taken', 'user-deep');
    deepest.data = `{"event":"deepest taken","distinct_id":"user-deep","properties":{"p":${nested(125)}}}`;
    const tooDeep = captured('past the stack', 'user-deep');
    tooDeep.data = `{"event":"past the stack","distinct_id":"user-deep","properties":{"p":${nested(20_000)}}}`;
    deadLetters.length = 0;
    await handler.handle(batchOf([deepest, tooDeep]));

    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    const stored = rows.find((row) => row.event === 'deepest taken');
    expect(JSON.stringify((JSON.parse(stored!.properties) as { p: unknown }).p)).toBe(nested(125));
    expect(rows.some((row) => row.event === 'past the stack')).toBe(false);
    expect(deadLetters.map((dead) => dead.headers[DEAD_LETTER_REASON_HEADER].split(':')[0])).toEqual([
      'unserializable',
    ]);
  });

  it("dead-letters a message whose token is not its project's, and stores the project's own", async () => {
    const own = captured('own token', 'user-token');
    const bogus = { ...captured('bogus token', 'user-token'), token: 'phc_bogus' };
    const others = { ...captured("another project's token", 'user-token'), token: 'phc_other' };
    const personalKey = { ...captured('a personal key', 'user-token'), token: 'phx_personal' };
    deadLetters.length = 0;
    await handler.handle(batchOf([own, bogus, others, personalKey]));

    const rows = await readEvents(clickhouse.client, clickhouse.database, { teamId });
    expect(rows.filter((row) => row.distinct_id === 'user-token').map((row) => row.event)).toEqual([
      'own token',
    ]);
    expect(await readEvents(clickhouse.client, clickhouse.database, { teamId: otherTeamId })).toEqual([]);
    expect(deadLetters.map((dead) => (JSON.parse(dead.value) as CapturedEvent).uuid)).toEqual([
      bogus.uuid,
      others.uuid,
      personalKey.uuid,
    ]);
    expect(new Set(deadLetters.map((dead) => dead.headers[DEAD_LETTER_REASON_HEADER]))).toEqual(
      new Set([`invalid_token: the message's token is not the API token of project ${teamId}`]),
    );
    // No person for a distinct id only the bogus messages carried.
    const bogusOnly = { ...captured('bogus only', 'user-bogus-only'), token: 'phc_bogus' };
    await handler.handle(batchOf([bogusOnly]));
    const persons = await pool.query(
      `SELECT 1 FROM person_distinct_ids WHERE distinct_id = 'user-bogus-only'`,
    );
    expect(persons.rows).toEqual([]);
  });

  describe('with the dead letters on Kafka', () => {
    const logger = pino({ level: 'silent' });
    /** Every dead letter of this run has a key starting with this. */
    const runKey = `poison-${crypto.randomUUID()}`;
    let brokers: string[];

    beforeAll(async () => {
      brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
      if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set: these tests need a real broker');
      await ensureTopics(brokers, [{ name: DEAD_LETTER_TOPIC, partitions: 1, replicationFactor: 1 }]);
    });

    /** The dead letters of this batch's source offsets, read back from the topic. */
    async function deadLettersAt(offsets: string[]): Promise<ConsumedMessage[]> {
      const consumer = new KafkaEventConsumer({
        brokers,
        logger,
        groupId: `test-handler-dlq-${crypto.randomUUID()}`,
        topics: [DEAD_LETTER_TOPIC],
        maxWaitTimeMs: 200,
      });
      const found: ConsumedMessage[] = [];
      try {
        await consumer.start(async (consumed) => {
          found.push(
            ...consumed.messages.filter(
              (message) =>
                message.headers[DEAD_LETTER_SOURCE_OFFSET_HEADER] !== undefined &&
                offsets.includes(message.headers[DEAD_LETTER_SOURCE_OFFSET_HEADER]) &&
                message.key?.startsWith(runKey),
            ),
          );
          await Promise.resolve();
        });
        for (const deadline = Date.now() + 20_000; found.length < offsets.length && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await consumer.stop();
      }
      return found;
    }

    /** A batch of one malformed message of about 1.04 MB: under the broker's limit, as consumed. */
    function poisonBatch(bytes: number): DecodedBatch<DecodedEvent> {
      return decodedInCall(
        {
          topic: EVENTS_TOPIC,
          partition: 3,
          messages: [
            {
              key: `${runKey}:${offset}`,
              value: `{"event": "${'x'.repeat(bytes - 11)}`,
              headers: {},
              offset: String(offset++),
            },
          ],
        },
        (message) => handler.decode(message),
      );
    }

    it('dead-letters a bounded copy of a malformed message whose whole copy the producer refuses, and counts it', async () => {
      const publisher = new KafkaEventPublisher({ brokers, logger });
      const registry = new Registry();
      try {
        const batch = poisonBatch(1_040_000);
        await handlerWith({ deadLetters: publisher, registry }).handle(batch);

        const [copy] = await deadLettersAt([batch.messages[0].offset]);
        expect(copy.value).toBe(batch.messages[0].value.slice(0, DEAD_LETTER_HEAD_BYTES));
        expect(copy.headers).toMatchObject({
          [DEAD_LETTER_TRUNCATED_HEADER]: 'true',
          [DEAD_LETTER_VALUE_BYTES_HEADER]: '1040000',
          [DEAD_LETTER_REASON_HEADER]: 'invalid_json: the message is not a JSON object',
        });
        const metrics = await registry.getMetricsAsJSON();
        const bounded = metrics.find((metric) => metric.name === 'ingestion_dead_letters_bounded_total');
        expect(bounded?.values).toEqual([expect.objectContaining({ value: 1 })]);
      } finally {
        await publisher.close();
      }
    });

    it('falls back to a small copy when the broker refuses the dead letter as too large', async () => {
      // A producer that believes the topic takes 2 MB: the broker (1 MiB) refuses the whole copy.
      const publisher = new KafkaEventPublisher({ brokers, logger, maxMessageBytes: 2_000_000 });
      try {
        const batch = poisonBatch(1_200_000);
        await handlerWith({ deadLetters: publisher }).handle(batch);

        const [copy] = await deadLettersAt([batch.messages[0].offset]);
        expect(copy.headers).toMatchObject({
          [DEAD_LETTER_TRUNCATED_HEADER]: 'true',
          [DEAD_LETTER_VALUE_BYTES_HEADER]: '1200000',
        });
        expect(batch.messages[0].value.startsWith(copy.value)).toBe(true);
        expect(copy.value.length).toBeLessThan(8 * 1024);
      } finally {
        await publisher.close();
      }
    });
  });

  describe('ingested_event', () => {
    let projects = 0;

    /** A new project with a token of its own, and what capture would queue for it. */
    async function newProject(): Promise<{ id: number; event: (name: string) => CapturedEvent }> {
      projects += 1;
      const token = `phc_first_${projects}`;
      const { rows } = await pool.query<{ id: number }>(
        `INSERT INTO teams (uuid, organization_id, name, api_token)
         VALUES ($1, '00000000-0000-4000-8000-0000000000aa', 'First', $2) RETURNING id`,
        [crypto.randomUUID(), token],
      );
      const id = rows[0].id;
      return { id, event: (name) => ({ ...captured(name, 'first-user'), team_id: id, token }) };
    }

    async function ingestedEvent(id: number): Promise<boolean> {
      const { rows } = await pool.query<{ ingested_event: boolean }>(
        'SELECT ingested_event FROM teams WHERE id = $1',
        [id],
      );
      return rows[0].ingested_event;
    }

    it("sets a project's ingested_event at its first stored event, and not for events it did not store", async () => {
      const project = await newProject();
      const untouched = await newProject();
      // Dead-lettered (not the project's token) and dropped (no distinct id): nothing stored.
      await handler.handle(
        batchOf([
          { ...project.event('wrong token'), token: 'phc_t' },
          { ...project.event('no distinct id'), distinct_id: '' },
        ]),
      );
      expect(await ingestedEvent(project.id)).toBe(false);

      await handler.handle(batchOf([project.event('first')]));
      expect(await ingestedEvent(project.id)).toBe(true);
      expect(await ingestedEvent(untouched.id)).toBe(false);
    });

    it('asks Postgres once per project and process, and tells capture of the change once, at the first event', async () => {
      const project = await newProject();
      const updates: string[] = [];
      const counting: Pick<Pool, 'query'> = {
        query: ((text: string, values?: unknown[]) => {
          if (/^UPDATE teams/.test(text)) updates.push(text);
          return pool.query(text, values);
        }) as Pool['query'],
      };
      const listener = new Client({ connectionString: database.url });
      await listener.connect();
      const notified: string[] = [];
      let ended: () => void = () => undefined;
      const end = new Promise<void>((resolve) => (ended = resolve));
      listener.on('notification', ({ payload }) => {
        if (payload === 'end of test') ended();
        else if (payload) notified.push(payload);
      });
      try {
        await listener.query('LISTEN hogbase_project_changed');
        const marker = new IngestedEventMarker(counting, pino({ level: 'silent' }));
        const running = handlerWith({ ingestedEvents: marker });
        await running.handle(batchOf([project.event('first')]));
        await running.handle(batchOf([project.event('second'), project.event('third')]));
        expect(updates).toHaveLength(1);

        // Another process (or this one restarted) knows nothing: it asks, and changes nothing.
        await handlerWith().handle(batchOf([project.event('after a restart')]));
        expect(await ingestedEvent(project.id)).toBe(true);

        // Notifications arrive in commit order: once this one is in, every earlier one is.
        await pool.query("SELECT pg_notify('hogbase_project_changed', 'end of test')");
        await end;
        expect(notified.filter((payload) => payload === String(project.id))).toEqual([String(project.id)]);
      } finally {
        await listener.end();
      }
    });
  });

  it('throws (so the batch is retried, not committed) when ClickHouse cannot take the rows', async () => {
    const missing = openClickHouse({
      database: 'test_database_that_does_not_exist',
      dataPath: testClickHouseDataPath(),
    });
    try {
      const broken = handlerWith({ events: missing.events });
      await expect(broken.handle(batchOf([captured('lost?', 'user-4')]))).rejects.toThrow();
    } finally {
      await closeClickHouse(missing.client);
    }
  });
});
