import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import pino from 'pino';
import { Registry, type Counter } from 'prom-client';
import {
  closeClickHouse,
  createClickHouse,
  migrateClickHouse,
  type ClickHouseClient,
} from '@hogbase/clickhouse';
import { loadKafkaConfig, type KafkaConfig } from '@hogbase/config';
import { EventBatchHandler, PersonProcessor } from '@hogbase/ingestion';
import { KafkaEventConsumer, KafkaEventPublisher, type BatchHandler } from '@hogbase/queue';

/** The ClickHouse database of the benchmarks, in a chDB data directory made for this run. */
export const BENCH_CLICKHOUSE_DATABASE = 'hogbase_bench';

export interface TimedHandler {
  handle: BatchHandler;
  /** Events by outcome (written, dropped, dead_letter), from the handler's metrics. */
  outcomes(): Promise<Record<string, number>>;
  /** Duration (ms) and size of each handler call since the last take. */
  takeCalls(): { durationsMs: number[]; sizes: number[] };
}

/**
 * What apps/ingestion/src/main.ts opens, in this process: chDB (the embedded engine, a temp data
 * path), a Postgres pool for persons (DATABASE_POOL_SIZE's default), a dead-letter publisher.
 */
export interface IngestionPipeline {
  clickhouse: ClickHouseClient;
  pool: Pool;
  deadLetters: KafkaEventPublisher;
  kafka: KafkaConfig & { brokers: string[] };
  /** A handler as ingestion runs it, with its own metrics registry, timing each call. */
  createHandler(): TimedHandler;
  /** A consumer as ingestion runs it (default batch size and concurrency), in its own group. */
  createConsumer(groupId: string, topics: string[], fromBeginning: boolean): KafkaEventConsumer;
  countEvents(teamId: number): Promise<number>;
  close(): Promise<void>;
}

const logger = pino({ level: 'warn' }).child({ app: 'ingestion' });

export async function openIngestionPipeline(
  brokers: string[],
  databaseUrl: string,
): Promise<IngestionPipeline> {
  const kafka = { ...loadKafkaConfig({ ...process.env, KAFKA_BROKERS: brokers.join(',') }), brokers };
  const dataPath = await mkdtemp(path.join(tmpdir(), 'hogbase-bench-chdb-'));
  const clickhouse = createClickHouse({ database: BENCH_CLICKHOUSE_DATABASE, dataPath });
  const pool = new Pool({ connectionString: databaseUrl, max: 10, application_name: 'ingestion' });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  const deadLetters = new KafkaEventPublisher({
    brokers,
    clientId: `${kafka.clientId}-ingestion`,
    logger,
  });
  const close = async () => {
    await deadLetters.close();
    await closeClickHouse(clickhouse);
    await pool.end();
    await rm(dataPath, { recursive: true, force: true });
  };
  try {
    await migrateClickHouse(clickhouse, { database: BENCH_CLICKHOUSE_DATABASE });
  } catch (error) {
    await close();
    throw error;
  }
  const persons = new PersonProcessor(pool);

  return {
    clickhouse,
    pool,
    deadLetters,
    kafka,
    createHandler() {
      const registry = new Registry();
      const handler = new EventBatchHandler({
        persons,
        clickhouse,
        database: BENCH_CLICKHOUSE_DATABASE,
        deadLetters,
        logger,
        registry,
      });
      let calls = { durationsMs: [] as number[], sizes: [] as number[] };
      return {
        handle: async (batch) => {
          const startedAt = performance.now();
          await handler.handle(batch);
          calls.durationsMs.push(performance.now() - startedAt);
          calls.sizes.push(batch.messages.length);
        },
        takeCalls() {
          const taken = calls;
          calls = { durationsMs: [], sizes: [] };
          return taken;
        },
        async outcomes() {
          const metric = registry.getSingleMetric('ingestion_events_total') as Counter | undefined;
          const counts: Record<string, number> = {};
          for (const value of (await metric?.get())?.values ?? []) {
            const outcome = String(value.labels.outcome);
            counts[outcome] = (counts[outcome] ?? 0) + value.value;
          }
          return counts;
        },
      };
    },
    createConsumer(groupId, topics, fromBeginning) {
      return new KafkaEventConsumer({
        brokers,
        clientId: `${kafka.clientId}-ingestion`,
        groupId,
        topics,
        fromBeginning,
        // As ingestion runs it: KAFKA_CONSUMER_CONCURRENCY partitions at a time.
        partitionsConsumedConcurrently: kafka.consumerConcurrency,
        logger,
      });
    },
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
