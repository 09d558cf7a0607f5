import { Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import { closeClickHouse, createClickHouse, migrateClickHouse } from '@hogbase/clickhouse';
import {
  ConfigError,
  loadClickHouseConfig,
  loadKafkaConfig,
  loadManagementConfig,
  runMain,
  stopOnSignal,
} from '@hogbase/config';
import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { PersonProcessor } from '@hogbase/ingestion';
import { postgresPoolTimeouts } from '@hogbase/postgres';
import { ensureTopics, eventTopicSpecs, KafkaEventConsumer, KafkaEventPublisher } from '@hogbase/queue';
import { EventBatchHandler } from '@hogbase/ingestion';

/**
 * Ingestion alone (split mode): Kafka → persons and groups in Postgres → events in ClickHouse,
 * committing offsets only after both writes. SIGTERM stops intake, finishes the batch in flight,
 * commits, then exits.
 */
async function main(): Promise<void> {
  const { database, logLevel } = loadManagementConfig();
  const kafka = loadKafkaConfig();
  const clickhouseConfig = loadClickHouseConfig();
  const logger = pino({ level: logLevel }).child({ app: 'ingestion' });
  if (!database.url) throw new ConfigError('DATABASE_URL', '', 'is required when ingestion runs alone');
  if (!kafka.brokers) throw new ConfigError('KAFKA_BROKERS', '', 'is required when ingestion runs alone');

  const pool = new Pool({
    connectionString: database.url,
    max: database.poolSize,
    application_name: 'ingestion',
    ...postgresPoolTimeouts(),
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  const clickhouse = createClickHouse(clickhouseConfig);
  await migrateClickHouse(clickhouse, {
    database: clickhouseConfig.database,
    cluster: clickhouseConfig.cluster,
  });
  await ensureTopics(kafka.brokers, eventTopicSpecs(kafka.topicPartitions, kafka.replicationFactor), {
    logger,
  });

  const deadLetters = new KafkaEventPublisher({
    brokers: kafka.brokers,
    clientId: `${kafka.clientId}-ingestion`,
    logger,
  });
  const handler = new EventBatchHandler({
    persons: new PersonProcessor(pool),
    clickhouse,
    database: clickhouseConfig.database,
    deadLetters,
    logger,
    registry: new Registry(),
  });
  const consumer = new KafkaEventConsumer({
    brokers: kafka.brokers,
    clientId: `${kafka.clientId}-ingestion`,
    groupId: kafka.consumerGroupId,
    topics: [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC],
    partitionsConsumedConcurrently: kafka.consumerConcurrency,
    logger,
  });
  await consumer.start(handler.handle);
  logger.info(
    { topics: [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC], group: kafka.consumerGroupId },
    'ingestion consuming',
  );

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'ingestion stopping: draining the batch in flight');
      await consumer.stop();
      await deadLetters.close();
      await closeClickHouse(clickhouse);
      await pool.end();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
