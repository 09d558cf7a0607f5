import { Pool } from 'pg';
import type { Logger } from 'pino';
import { createBatchExportDestinations } from '@hogbase/batch-exports';
import { closeClickHouse, createClickHouse } from '@hogbase/clickhouse';
import { ConfigError, openSecretBox, type WorkersConfig } from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { postgresPoolTimeouts } from '@hogbase/postgres';
import {
  createKafkaClient,
  KafkaEventPublisher,
  KafkaIngestionProgress,
  type EventPublisher,
  type IngestionProgress,
} from '@hogbase/queue';
import type { WorkersEngines } from './workers.service';

export interface OpenedWorkersEngines extends WorkersEngines {
  /** After the service stopped: ClickHouse, then Postgres. */
  close(): Promise<void>;
}

/** Bounded by the Postgres timeouts; unheard, pg's 'error' on an idle connection would end the process. */
export function createWorkersPool(url: string, poolSize: number, logger: Logger): Pool {
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    application_name: 'workers',
    ...postgresPoolTimeouts(),
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'idle Postgres connection lost'));
  return pool;
}

/** Beside ingestion in npm start; alone, DATABASE_URL and Kafka. */
export interface WorkersSurroundings {
  databaseUrl?: string;
  ingestion?: IngestionProgress;
  publisher?: EventPublisher;
}

/**
 * A ClickHouse server (chDB's data path belongs to the process that opened it); the Kafka producer
 * connects in the background: a broker down at start-up fails the apps' captures, not the start.
 */
export async function openWorkersEngines(
  config: WorkersConfig,
  logger: Logger,
  surroundings: WorkersSurroundings = {},
): Promise<OpenedWorkersEngines> {
  const databaseUrl = surroundings.databaseUrl ?? config.database.url;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required when the workers run alone');
  let kafkaProgress: KafkaIngestionProgress | undefined;
  let kafkaPublisher: KafkaEventPublisher | undefined;
  let ingestion = surroundings.ingestion;
  let publisher = surroundings.publisher;
  const { brokers } = config.kafka;
  if (!ingestion) {
    if (!brokers) {
      throw new ConfigError(
        'KAFKA_BROKERS',
        '',
        "is required when the workers run alone: a run waits for ingestion's consumer group to process its interval",
      );
    }
    const kafka = createKafkaClient({ brokers, clientId: config.kafka.clientId, logger }, { quiet: true });
    kafkaProgress = new KafkaIngestionProgress({
      kafka,
      groupId: config.kafka.consumerGroupId,
      topics: [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC],
    });
    ingestion = kafkaProgress;
  }
  if (!publisher) {
    if (!brokers) {
      throw new ConfigError(
        'KAFKA_BROKERS',
        '',
        "is required when the workers run alone: import apps' events go to Kafka",
      );
    }
    kafkaPublisher = new KafkaEventPublisher({
      brokers,
      clientId: `${config.kafka.clientId}-workers`,
      timeoutMs: config.kafka.producerTimeoutMs,
      maxMessageBytes: config.kafka.maxMessageBytes,
      logger,
    });
    kafkaPublisher
      .connect()
      .catch((error: unknown) => logger.warn({ err: error }, 'Kafka not reachable yet'));
    publisher = kafkaPublisher;
  }
  const pool = createWorkersPool(databaseUrl, config.database.poolSize, logger);
  const clickhouse = createClickHouse(config.clickhouse);
  return {
    pool,
    databaseUrl,
    clickhouse,
    ingestion,
    secrets: await openSecretBox(config.encryptionKeys, config.dataDir),
    destinations: createBatchExportDestinations({
      egress: new EgressPolicy(config.egress),
      s3ServerCredentials: config.batchExportS3ServerCredentials,
    }),
    publisher,
    logger,
    async close() {
      await kafkaPublisher?.close();
      await kafkaProgress?.close();
      await closeClickHouse(clickhouse);
      await pool.end();
    },
  };
}
