import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import pino from 'pino';
import type { Counter, Histogram } from 'prom-client';
import {
  closeClickHouse,
  openClickHouse,
  type ClickHouseClient,
  type EventsWriter,
} from '@hogbase/clickhouse';
import { loadIngestionConfig, type IngestionConfig, type KafkaConfig } from '@hogbase/config';
import {
  createDeadLetterPublisher,
  createIngestionPool,
  ingestionConsumerOptions,
  prepareEventStores,
  startIngestionService,
} from '@hogbase/ingestion';
import type { RunningService } from '@hogbase/service-runtime';
import {
  KafkaEventConsumer,
  type BatchHandler,
  type ConsumedBatch,
  type KafkaConsumerOptions,
  type KafkaEventPublisher,
} from '@hogbase/queue';

export const BENCH_CLICKHOUSE_DATABASE = 'hogbase_bench';

/** On a consumer group and topics of the benchmark's. */
export interface BenchIngestion {
  /** By outcome (written, dropped, dead_letter). */
  outcomes(): Promise<Record<string, number>>;
  /** Since the last take. */
  takeCalls(): { durationsMs: number[]; sizes: number[] };
  /** Mean ms per handler call of its two stages, and rows per ClickHouse insert. */
  stageMeans(): Promise<{ postgresMs: number; clickhouseMs: number; rowsPerInsert: number }>;
  stop(): Promise<void>;
}

/** What apps/ingestion/src/main.ts opens, in this process; the service itself starts per round. */
export interface IngestionPipeline {
  clickhouse: ClickHouseClient;
  events: EventsWriter;
  pool: Pool;
  deadLetters: KafkaEventPublisher;
  kafka: KafkaConfig & { brokers: string[] };
  config: IngestionConfig;
  /**
   * `onBatch` once each batch is written, with when the service was handed it. `withApps` gives it
   * the job engine, as apps/ingestion does; without it ingestion runs no pipeline apps.
   */
  startIngestion(
    groupId: string,
    topics: string[],
    fromBeginning: boolean,
    onBatch?: (batch: ConsumedBatch, startedAt: number) => void,
    options?: { withApps?: boolean },
  ): Promise<BenchIngestion>;
  /** With ingestion's settings, in its own group. */
  createConsumer(groupId: string, topics: string[], fromBeginning: boolean): KafkaEventConsumer;
  countEvents(teamId: number): Promise<number>;
  close(): Promise<void>;
}

const logger = pino({ level: 'warn' }).child({ app: 'ingestion' });

class TimedConsumer extends KafkaEventConsumer {
  constructor(
    options: KafkaConsumerOptions,
    private readonly onCall: (batch: ConsumedBatch, startedAt: number, durationMs: number) => void,
    /** Awaited before joining the group. */
    private readonly beforeStart: () => Promise<void> = () => Promise.resolve(),
  ) {
    super(options);
  }

  override async start(handler: BatchHandler): Promise<void> {
    await this.beforeStart();
    return super.start(async (batch) => {
      const startedAt = performance.now();
      await handler(batch);
      this.onCall(batch, startedAt, performance.now() - startedAt);
    });
  }
}

export async function openIngestionPipeline(
  brokers: string[],
  databaseUrl: string,
): Promise<IngestionPipeline> {
  const dataPath = await mkdtemp(path.join(tmpdir(), 'hogbase-bench-chdb-'));
  // The production defaults, on the bench's Postgres, broker and chDB.
  const config: IngestionConfig = loadIngestionConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: brokers.join(','),
    CLICKHOUSE_DATABASE: BENCH_CLICKHOUSE_DATABASE,
    CLICKHOUSE_DATA_PATH: dataPath,
    EGRESS_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
  });
  const kafka = { ...config.kafka, brokers };
  const { client: clickhouse, events } = openClickHouse(config.clickhouse);
  const pool = createIngestionPool({ ...config.database, url: databaseUrl }, logger);
  const deadLetters = createDeadLetterPublisher(kafka, logger);
  const close = async () => {
    await deadLetters.close();
    await closeClickHouse(clickhouse);
    await pool.end();
    await rm(dataPath, { recursive: true, force: true });
  };
  try {
    await prepareEventStores({ clickhouse: { client: clickhouse, database: BENCH_CLICKHOUSE_DATABASE } });
  } catch (error) {
    await close();
    throw error;
  }
  const createConsumer = (groupId: string, topics: string[], fromBeginning: boolean) =>
    new KafkaEventConsumer(ingestionConsumerOptions(kafka, logger, { groupId, topics, fromBeginning }));

  return {
    clickhouse,
    events,
    pool,
    deadLetters,
    kafka,
    config,
    async startIngestion(groupId, topics, fromBeginning, onBatch, options) {
      let calls = { durationsMs: [] as number[], sizes: [] as number[] };
      // Set once startIngestionService returns, which is before it starts the consumer.
      const running: { service?: RunningService } = {};
      // The service starts the job engine beside the consumer, and a batch that came first would fail
      // and back off: as in a running deployment, the consumer joins once the engine is up.
      const destinationsStarted = async () => {
        // Bounded, so a stop meanwhile ends it.
        const deadline = Date.now() + 60_000;
        while (
          running.service === undefined ||
          (await running.service.ready()).checks.destinations !== true
        ) {
          if (Date.now() > deadline) throw new Error('the destinations job engine did not start in 60 s');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const consumer = new TimedConsumer(
        ingestionConsumerOptions(kafka, logger, { groupId, topics, fromBeginning }),
        (batch, startedAt, durationMs) => {
          calls.durationsMs.push(durationMs);
          calls.sizes.push(batch.messages.length);
          onBatch?.(batch, startedAt);
        },
        options?.withApps ? destinationsStarted : undefined,
      );
      const service = await startIngestionService(config, {
        pool,
        clickhouse,
        events,
        consumer,
        deadLetters,
        logger,
        databaseUrl: options?.withApps ? databaseUrl : undefined,
      });
      running.service = service;
      return {
        stop: () => service.stop(),
        takeCalls() {
          const taken = calls;
          calls = { durationsMs: [], sizes: [] };
          return taken;
        },
        async stageMeans() {
          const mean = async (name: string) => {
            const values =
              (await (service.metrics.getSingleMetric(name) as Histogram | undefined)?.get())?.values ?? [];
            const total = (suffix: string) =>
              values
                .filter((value) => value.metricName === `${name}_${suffix}`)
                .reduce((sum, value) => sum + value.value, 0);
            const count = total('count');
            return count > 0 ? total('sum') / count : 0;
          };
          return {
            postgresMs: (await mean('ingestion_postgres_write_duration_seconds')) * 1000,
            clickhouseMs: (await mean('ingestion_clickhouse_write_duration_seconds')) * 1000,
            rowsPerInsert: await mean('ingestion_clickhouse_insert_rows'),
          };
        },
        async outcomes() {
          const metric = service.metrics.getSingleMetric('ingestion_events_total') as Counter | undefined;
          const counts: Record<string, number> = {};
          for (const value of (await metric?.get())?.values ?? []) {
            const outcome = String(value.labels.outcome);
            counts[outcome] = (counts[outcome] ?? 0) + value.value;
          }
          return counts;
        },
      };
    },
    createConsumer,
    async countEvents(teamId) {
      const result = await clickhouse.query({
        query: `SELECT count() AS count FROM ${BENCH_CLICKHOUSE_DATABASE}.events WHERE team_id = {teamId:Int64}`,
        query_params: { teamId },
        format: 'JSONEachRow',
      });
      const [row] = await result.json<{ count: string }>();
      return Number(row.count);
    },
    close,
  };
}
