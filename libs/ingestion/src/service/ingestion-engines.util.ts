import type { Duplex } from 'node:stream';
import { Pool } from 'pg';
import type { Logger } from 'pino';
import { closeClickHouse, openClickHouse } from '@hogbase/clickhouse';
import { ConfigError, type DatabaseConfig, type IngestionConfig, type KafkaConfig } from '@hogbase/config';
import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { postgresPoolTimeouts } from '@hogbase/postgres';
import { KafkaEventConsumer, KafkaEventPublisher, type KafkaConsumerOptions } from '@hogbase/queue';
import type { IngestionEngines } from './ingestion.service';

export const INGESTION_TOPICS = [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC] as const;

/**
 * pg emits 'error' on the pool when an idle connection dies; unheard, it would end the process.
 * `connect`, when given, opens each connection instead of a socket (npm start's embedded Postgres).
 */
export function createIngestionPool(
  database: DatabaseConfig & { url: string },
  logger: Logger,
  connect?: () => Duplex,
): Pool {
  const pool = new Pool({
    connectionString: database.url,
    max: database.poolSize,
    application_name: 'ingestion',
    ...(connect ? { stream: connect } : {}),
    ...postgresPoolTimeouts(),
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  return pool;
}

/** A benchmark overrides group and topics. */
export function ingestionConsumerOptions(
  kafka: KafkaConfig & { brokers: string[] },
  logger: Logger,
  overrides: Partial<KafkaConsumerOptions> = {},
): KafkaConsumerOptions {
  return {
    brokers: kafka.brokers,
    clientId: `${kafka.clientId}-ingestion`,
    groupId: kafka.consumerGroupId,
    topics: INGESTION_TOPICS,
    partitionsConsumedConcurrently: kafka.consumerConcurrency,
    maxBatchSize: kafka.consumerMaxBatchSize,
    maxBytesPerPartition: kafka.consumerFetchBytesPerPartition,
    // Enough for every partition worked on at once to bring a full batch in one fetch.
    maxBytes: kafka.consumerFetchBytesPerPartition * kafka.consumerConcurrency,
    logger,
    ...overrides,
  };
}

export function createIngestionConsumer(
  kafka: KafkaConfig & { brokers: string[] },
  logger: Logger,
): KafkaEventConsumer {
  return new KafkaEventConsumer(ingestionConsumerOptions(kafka, logger));
}

export function createDeadLetterPublisher(
  kafka: KafkaConfig & { brokers: string[] },
  logger: Logger,
): KafkaEventPublisher {
  return new KafkaEventPublisher({ brokers: kafka.brokers, clientId: `${kafka.clientId}-ingestion`, logger });
}

export interface OpenedIngestionEngines extends IngestionEngines {
  /** After the service stopped. */
  close(): Promise<void>;
}

/** Split mode. Connects nothing yet: a dependency down at start-up makes it not ready, never exit. */
export function openIngestionEngines(config: IngestionConfig, logger: Logger): OpenedIngestionEngines {
  const { url } = config.database;
  const { brokers } = config.kafka;
  if (!url) throw new ConfigError('DATABASE_URL', '', 'is required when ingestion runs alone');
  if (!brokers) throw new ConfigError('KAFKA_BROKERS', '', 'is required when ingestion runs alone');
  const kafka = { ...config.kafka, brokers };
  const pool = createIngestionPool({ ...config.database, url }, logger);
  const { client: clickhouse, events } = openClickHouse(config.clickhouse);
  const consumer = createIngestionConsumer(kafka, logger);
  const deadLetters = createDeadLetterPublisher(kafka, logger);
  return {
    pool,
    clickhouse,
    events,
    consumer,
    deadLetters,
    logger,
    databaseUrl: url,
    async close() {
      await consumer.stop();
      await deadLetters.close();
      await closeClickHouse(clickhouse);
      await pool.end();
    },
  };
}
