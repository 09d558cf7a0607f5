import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { EVENTS_TOPIC, toQueueMessage, type CapturedEvent } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import { KafkaEventPublisher } from '@hogbase/queue';
import {
  createTestDatabase,
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  splitModeEnv,
  startApp,
  stopApp,
  waitForApp,
  waitForReady,
  type AppProcess,
  type TestDatabase,
} from '@hogbase/test-support';

const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);

/**
 * Ingestion alone (split mode) serves /_health, /_ready and /metrics on INGESTION_PORT, as a
 * Kubernetes probe or a Prometheus scrape would call them, against the machine's Postgres, a real
 * Kafka broker and chDB.
 */
describe('ingestion alone: /_health, /_ready and /metrics on INGESTION_PORT', () => {
  const run = randomBytes(4).toString('hex');
  let database: TestDatabase;
  let teamId: number;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let probeUrl: string;
  let ingestion: AppProcess | undefined;

  beforeAll(async () => {
    if (brokers.length === 0) {
      throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
    }
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url }); // Migrates.
    await dataSource.query(
      `INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-4000-8000-0000000000aa', 'Org', 'org')`,
    );
    [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token)
       VALUES ('00000000-0000-4000-8000-0000000000bb', '00000000-0000-4000-8000-0000000000aa', 'Web', $1)
       RETURNING id`,
      [`phc_probes_${run}`],
    );
    await dataSource.destroy();
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-ingestion-probes-'));
    const port = await freePort();
    probeUrl = `http://127.0.0.1:${port}`;
    env = {
      ...splitModeEnv({
        databaseUrl: database.url,
        brokers,
        consumerGroup: `ingestion-probes-${run}`,
        dataDir,
      }),
      INGESTION_PORT: String(port),
    };
  });

  afterAll(async () => {
    await killApps(ingestion);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  async function personExists(distinctId: string): Promise<boolean> {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>(
        'SELECT count(*)::text AS count FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = $2',
        [teamId, distinctId],
      );
      return rows[0].count === '1';
    } finally {
      await client.end();
    }
  }

  it(
    'answers /_ready 200 with every check once consuming, and counts a consumed event on /metrics',
    async () => {
      ingestion = startApp('ingestion', env);
      const app = ingestion;
      await waitForReady(app, probeUrl, '/_health');
      await waitForReady(app, probeUrl);
      const ready = await fetch(`${probeUrl}/_ready`);
      expect([ready.status, await ready.json()]).toEqual([
        200,
        { status: 'ok', checks: { queue: true, postgres: true, clickhouse: true, destinations: true } },
      ]);
      expect(app.output()).toContain('ingestion consuming');

      const distinctId = `probe-user-${run}`;
      const uuid = randomUUID();
      const now = new Date().toISOString();
      const event: CapturedEvent = {
        uuid,
        distinct_id: distinctId,
        ip: null,
        data: JSON.stringify({ event: 'probe event', distinct_id: distinctId, uuid, properties: {} }),
        now,
        sent_at: null,
        token: `phc_probes_${run}`,
        team_id: teamId,
        event: 'probe event',
        timestamp: now,
      };
      const publisher = new KafkaEventPublisher({ brokers, clientId: `ingestion-probes-${run}` });
      try {
        await publisher.publish(EVENTS_TOPIC, [toQueueMessage(event)]);
      } finally {
        await publisher.close();
      }

      // NOTE: the group reads the shared events topic from its beginning, so other tests' events
      // are counted too (dropped: their projects do not exist here; dead-lettered: their tokens are
      // not this project's); this one is the person below.
      await waitForApp(app, 'the event written', () => personExists(distinctId));
      // The person is in Postgres before the batch's insert, dead letters and counts are done.
      let text = '';
      await waitForApp(app, 'the written event counted', async () => {
        const metrics = await fetch(`${probeUrl}/metrics`);
        expect(metrics.status).toBe(200);
        text = await metrics.text();
        const written = /^ingestion_events_total\{outcome="written",reason=""\} (\d+)$/m.exec(text);
        return Number(written?.[1] ?? 0) >= 1;
      });
      expect(text).toMatch(/^ingestion_batch_duration_seconds_count\{outcome="ok"\} [1-9]/m);
      expect(text).toMatch(/^ingestion_postgres_write_duration_seconds_count\{outcome="ok"\} [1-9]/m);
      expect(text).toMatch(/^ingestion_clickhouse_write_duration_seconds_count\{outcome="ok"\} [1-9]/m);

      expect(await stopApp(app)).toEqual({ code: 0, signal: null });
    },
    4 * READY_TIMEOUT_MS,
  );
});
