import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import pino from 'pino';
import { createNoOpDestination } from '@hogbase/batch-exports';
import { insertEvents, type EventRow } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { loadWorkersConfig, SecretBox } from '@hogbase/config';
import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import { Kafka, logLevel } from 'kafkajs';
import { ensureTopics, InProcessBus, KafkaIngestionProgress, type IngestionProgress } from '@hogbase/queue';
import type { RunningService } from '@hogbase/service-runtime';
import { createTestDatabase, eventually, type TestDatabase } from '@hogbase/test-support';
import { startWorkersService } from './workers.service';

const HOUR = 3_600_000;
/** What the workers do on their own polls: a minute at most. */
const RUN_WAIT = { timeoutMs: 60_000, intervalMs: 200 };

describe('the workers service: scheduled and backfilled runs on pg-boss', () => {
  let database: TestDatabase;
  let clickhouse: TestClickHouse;
  let pool: Pool;
  let workers: RunningService | undefined;
  const secrets = new SecretBox([randomBytes(32)]);
  let teamId: number;
  /** The start of the hour before the current one. */
  const lastHour = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const perHour = [12, 0, 30];

  beforeAll(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.destroy();
    pool = new Pool({ connectionString: database.url, max: 4 });
    const [organization] = (
      await pool.query<{ id: string }>(
        `INSERT INTO organizations (id, name, slug) VALUES ($1, 'Workers', $2) RETURNING id`,
        [randomUUID(), `workers-${randomBytes(3).toString('hex')}`],
      )
    ).rows;
    teamId = (
      await pool.query<{ id: number }>(
        `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Web', $3) RETURNING id`,
        [randomUUID(), organization.id, `phc_${randomBytes(8).toString('hex')}`],
      )
    ).rows[0].id;
    clickhouse = await createTestClickHouse();
    // Events in the three hours before the current one (none in the middle one), and one now.
    const rows: EventRow[] = [];
    perHour.forEach((count, index) => {
      const hourStart = lastHour - (perHour.length - 1 - index) * HOUR;
      for (let i = 0; i < count; i++) rows.push(eventAt(new Date(hourStart + i * 60_000)));
    });
    rows.push(eventAt(new Date()));
    await insertEvents(clickhouse.client, clickhouse.database, rows);
  });

  afterEach(async () => {
    await workers?.stop();
    workers = undefined;
  });

  afterAll(async () => {
    await pool?.end();
    await clickhouse?.drop();
    await database?.drop();
  });

  function eventAt(date: Date): EventRow {
    const time = date.toISOString().replace('T', ' ').replace('Z', '000');
    return {
      uuid: randomUUID(),
      event: 'clicked',
      properties: '{"button":"buy"}',
      timestamp: time,
      team_id: teamId,
      distinct_id: 'visitor',
      created_at: time,
      person_id: randomUUID(),
    };
  }

  async function createExport(scheduledUntil: Date | null): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO batch_exports (id, team_id, name, destination_type, destination_config, interval, scheduled_until)
       VALUES ($1, $2, 'noop', 'NoOp', $3, 'hour', $4)`,
      [id, teamId, secrets.seal(JSON.stringify({ max_chunk_rows: 7 })), scheduledUntil],
    );
    return id;
  }

  /** Nothing in flight: ingestion has processed everything captured so far. */
  const idleBus = new InProcessBus();

  function start(ingestion: IngestionProgress = idleBus): Promise<RunningService> {
    const config = {
      ...loadWorkersConfig({ DATABASE_URL: database.url, BATCH_EXPORT_LAG_SECONDS: '0' }),
      clickhouse: { ...loadWorkersConfig({}).clickhouse, database: clickhouse.database },
    };
    return startWorkersService(
      config,
      {
        pool,
        databaseUrl: database.url,
        clickhouse: clickhouse.client,
        ingestion,
        secrets,
        destinations: { NoOp: createNoOpDestination },
        logger: pino({ level: 'silent' }),
      },
      { tickMs: 200, ingestionPollMs: 200 },
    );
  }

  async function runsOf(exportId: string) {
    const { rows } = await pool.query<{
      status: string;
      data_interval_start: Date;
      records_completed: number;
      records_total_count: number | null;
      cursor: string | null;
    }>(
      `SELECT status, data_interval_start, records_completed, records_total_count, cursor
         FROM batch_export_runs WHERE batch_export_id = $1 ORDER BY data_interval_start`,
      [exportId],
    );
    return rows;
  }

  it('creates a run per hour that ended since the export was scheduled, and exports each hour exactly', async () => {
    const exportId = await createExport(new Date(lastHour - 2 * HOUR));
    workers = await start();
    await eventually(
      'three completed runs',
      async () => {
        const runs = await runsOf(exportId);
        return runs.length === 3 && runs.every((run) => run.status === 'Completed');
      },
      RUN_WAIT,
    );
    const runs = await runsOf(exportId);
    expect(
      runs.map((run) => [run.data_interval_start.getTime(), run.records_completed, run.records_total_count]),
    ).toEqual(perHour.map((count, index) => [lastHour - (2 - index) * HOUR, count, count]));
    // The hour in progress is not run yet; the scheduler's cursor stands at its start.
    const { rows } = await pool.query<{ scheduled_until: Date }>(
      'SELECT scheduled_until FROM batch_exports WHERE id = $1',
      [exportId],
    );
    expect(rows[0].scheduled_until.getTime()).toBe(lastHour + HOUR);
    expect((await workers.ready()).ready).toBe(true);
    const metrics = await workers.metrics.getSingleMetricAsString('batch_export_rows_exported_total');
    expect(metrics).toMatch(/batch_export_rows_exported_total \d+/);
  });

  it('runs a backfill the API created, and marks the backfill Completed', async () => {
    const exportId = await createExport(new Date(lastHour + HOUR));
    const backfillId = randomUUID();
    await pool.query(
      `INSERT INTO batch_export_backfills (id, batch_export_id, team_id, total_runs) VALUES ($1, $2, $3, 3)`,
      [backfillId, exportId, teamId],
    );
    for (let index = 0; index < 3; index++) {
      const start = lastHour - (2 - index) * HOUR;
      await pool.query(
        `INSERT INTO batch_export_runs (id, batch_export_id, backfill_id, data_interval_start, data_interval_end)
         VALUES ($1, $2, $3, $4, $5)`,
        [randomUUID(), exportId, backfillId, new Date(start), new Date(start + HOUR)],
      );
    }
    workers = await start();
    await eventually(
      'the backfill to complete',
      async () => {
        const { rows } = await pool.query<{ status: string }>(
          'SELECT status FROM batch_export_backfills WHERE id = $1',
          [backfillId],
        );
        return rows[0].status === 'Completed';
      },
      RUN_WAIT,
    );
    expect((await runsOf(exportId)).map((run) => run.records_completed)).toEqual(perHour);
  });

  it('leaves a run cancelled through the API alone', async () => {
    const exportId = await createExport(new Date(lastHour + HOUR));
    const runId = randomUUID();
    await pool.query(
      `INSERT INTO batch_export_runs (id, batch_export_id, status, data_interval_start, data_interval_end)
       VALUES ($1, $2, 'Cancelled', $3, $4)`,
      [runId, exportId, new Date(lastHour), new Date(lastHour + HOUR)],
    );
    workers = await start();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await runsOf(exportId)).map((run) => [run.status, run.records_completed])).toEqual([
      ['Cancelled', 0],
    ]);
  });

  it('holds a run until ingestion has processed what was captured before its interval ended', async () => {
    // Ingestion is busy with a publish capture began before the interval ended.
    const busy = new InProcessBus();
    let finishBatch!: () => void;
    const batchDone = new Promise<void>((resolve) => (finishBatch = resolve));
    await busy.start(() => batchDone);
    const published = busy.publish(EVENTS_TOPIC, [{ key: 'visitor', value: '{}' }]);
    const exportId = await createExport(new Date(lastHour + HOUR));
    const end = new Date();
    await pool.query(
      `INSERT INTO batch_export_runs (id, batch_export_id, data_interval_start, data_interval_end)
       VALUES ($1, $2, $3, $4)`,
      [randomUUID(), exportId, new Date(lastHour), end],
    );
    workers = await start(busy);
    await eventually(
      'the bus to say ingestion lags',
      async () => {
        const answer = await busy.processedUntil(end);
        return typeof answer === 'string' && answer.startsWith('ingestion is still processing');
      },
      RUN_WAIT,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // several polls of the gate
    expect((await runsOf(exportId)).map((run) => run.status)).toEqual(['Starting']);

    finishBatch();
    await published;
    await eventually(
      'the run to complete',
      async () => (await runsOf(exportId)).every((run) => run.status === 'Completed'),
      RUN_WAIT,
    );
    expect((await runsOf(exportId))[0].records_completed).toBe(perHour[2] + 1);
    await busy.stop();
  });

  it("holds a run until ingestion's Kafka consumer group has committed past its interval", async () => {
    const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
    if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set: run through `npm test`');
    const topic = `gate-${randomBytes(4).toString('hex')}`;
    const groupId = `gate-group-${randomBytes(4).toString('hex')}`;
    await ensureTopics(brokers, [{ name: topic, partitions: 2, replicationFactor: 1 }]);
    const kafka = new Kafka({ brokers, clientId: 'workers-test', logLevel: logLevel.NOTHING });
    // The run's interval ended a little while ago; capture appended three events of it, which
    // ingestion (the group) has not processed yet.
    const end = new Date(Date.now() - 5_000);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic,
      messages: [0, 1, 2].map((i) => ({
        key: `k${i}`,
        value: '{}',
        partition: 0,
        timestamp: String(end.getTime() - 1_000),
      })),
    });
    await producer.disconnect();
    const progress = new KafkaIngestionProgress({ kafka, groupId, topics: [topic], appendBoundMs: 1_000 });
    try {
      const exportId = await createExport(new Date(lastHour + HOUR));
      await pool.query(
        `INSERT INTO batch_export_runs (id, batch_export_id, data_interval_start, data_interval_end)
         VALUES ($1, $2, $3, $4)`,
        // Two seconds long: clear of the event beforeAll wrote "now".
        [randomUUID(), exportId, new Date(end.getTime() - 2_000), end],
      );
      workers = await start(progress);
      // (A new group's coordinator may need a moment: the gate, like this wait, asks again.)
      await eventually(
        'the gate to see the group behind',
        async () =>
          String(await progress.processedUntil(end).catch(() => '')).includes('has up to 3 messages left'),
        RUN_WAIT,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // several polls of the gate
      expect((await runsOf(exportId)).map((run) => run.status)).toEqual(['Starting']);

      // Ingestion writes the events, then commits their offsets.
      const late = [0, 1, 2].map((i) => eventAt(new Date(end.getTime() - 1_000 + i)));
      await insertEvents(clickhouse.client, clickhouse.database, late);
      const admin = kafka.admin();
      await admin.connect();
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '3' }] });
      await admin.disconnect();
      await eventually(
        'the run to complete',
        async () => (await runsOf(exportId)).every((run) => run.status === 'Completed'),
        RUN_WAIT,
      );
      expect((await runsOf(exportId))[0].records_completed).toBe(3);
    } finally {
      await workers?.stop();
      workers = undefined;
      await progress.close();
    }
  });
});
