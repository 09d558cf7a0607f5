import type { FastifyInstance } from 'fastify';
import { Pool } from 'pg';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import {
  buildCaptureApp,
  CAPTURE_POOL_TIMEOUTS,
  createFlagServices,
  ProjectTokenCache,
} from '@hogbase/capture-server';
import {
  closeClickHouse,
  createClickHouse,
  migrateClickHouse,
  type ClickHouseClient,
} from '@hogbase/clickhouse';
import type { StandaloneConfig } from '@hogbase/config';
import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { EventBatchHandler, PersonProcessor } from '@hogbase/ingestion';
import { postgresPoolTimeouts } from '@hogbase/postgres';
import {
  ensureTopics,
  eventTopicSpecs,
  InProcessBus,
  KafkaEventConsumer,
  KafkaEventPublisher,
  type EventConsumer,
  type EventPublisher,
} from '@hogbase/queue';

/** Postgres connections the pipeline holds besides the management app's pool. */
export const PIPELINE_POSTGRES_CONNECTIONS = 8;

export interface EventPipeline {
  capture: FastifyInstance;
  clickhouse: ClickHouseClient;
  /** Stops intake first (capture), drains the queue into storage, then closes the engines. */
  stop(): Promise<void>;
}

/**
 * Capture and ingestion in this process: events go from capture to ingestion through the
 * in-process bus (a publish resolves once the events are written, so a 200 still means stored),
 * or through Kafka when KAFKA_BROKERS is set. ClickHouse is chDB under DATA_DIR unless
 * CLICKHOUSE_URL names a server.
 */
export async function startEventPipeline(
  config: StandaloneConfig,
  databaseUrl: string,
  logger: Logger,
): Promise<EventPipeline> {
  const clickhouse = createClickHouse(config.clickhouse);
  await migrateClickHouse(clickhouse, {
    database: config.clickhouse.database,
    cluster: config.clickhouse.cluster,
  });

  // Every connection is bounded (statement, lock and idle-in-transaction timeouts, and a client-side
  // query timeout, the one bound the embedded Postgres honours).
  const ingestionPool = new Pool({
    connectionString: databaseUrl,
    max: 3,
    application_name: 'ingestion',
    ...postgresPoolTimeouts(),
  });
  // Capture reads tokens, and persons for the SDKs' flag calls.
  const capturePool = new Pool({
    connectionString: databaseUrl,
    max: 4,
    application_name: 'capture',
    ...CAPTURE_POOL_TIMEOUTS,
  });
  for (const pool of [ingestionPool, capturePool]) {
    pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  }

  let publisher: EventPublisher;
  let consumer: EventConsumer;
  let bus: InProcessBus | undefined;
  const { kafka } = config;
  if (kafka.brokers) {
    await ensureTopics(kafka.brokers, eventTopicSpecs(kafka.topicPartitions, kafka.replicationFactor), {
      logger,
    });
    publisher = new KafkaEventPublisher({
      brokers: kafka.brokers,
      clientId: kafka.clientId,
      timeoutMs: kafka.producerTimeoutMs,
      maxMessageBytes: kafka.maxMessageBytes,
      logger,
    });
    consumer = new KafkaEventConsumer({
      brokers: kafka.brokers,
      clientId: kafka.clientId,
      groupId: kafka.consumerGroupId,
      topics: [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC],
      partitionsConsumedConcurrently: kafka.consumerConcurrency,
      logger,
    });
  } else {
    bus = new InProcessBus({ logger });
    publisher = bus;
    consumer = bus;
  }

  const handler = new EventBatchHandler({
    persons: new PersonProcessor(ingestionPool),
    clickhouse,
    database: config.clickhouse.database,
    deadLetters: publisher,
    logger: logger.child({ app: 'ingestion' }),
    registry: new Registry(),
  });
  await consumer.start(handler.handle);

  const { app: capture } = buildCaptureApp({
    publisher,
    tokens: new ProjectTokenCache(capturePool),
    logger,
    batchBodyLimit: config.capture.batchBodyLimit,
    eventBodyLimit: config.capture.eventBodyLimit,
    maxDecodedBytes: config.capture.maxDecodedBytes,
    trustProxy: config.capture.trustProxy,
    maxEventBytes: kafka.brokers ? kafka.maxMessageBytes - 4_096 : undefined,
    flags: createFlagServices(capturePool),
    ready: async () => {
      await capturePool.query('SELECT 1');
      return consumer.healthy();
    },
  });

  return {
    capture,
    clickhouse,
    async stop() {
      await capture.close();
      // The bus is both ends: stopping it drains what capture already published into storage.
      if (!bus) await publisher.close();
      await consumer.stop();
      await closeClickHouse(clickhouse);
      await Promise.all([ingestionPool.end(), capturePool.end()]);
    },
  };
}
