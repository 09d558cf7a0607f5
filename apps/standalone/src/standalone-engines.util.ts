import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { createCapturePublisher } from '@hogbase/capture-server';
import { closeClickHouse, openClickHouse } from '@hogbase/clickhouse';
import { ConfigError, STANDALONE_JOB_ENGINE_CONNECTIONS, type StandaloneConfig } from '@hogbase/config';
import {
  createIngestionConsumer,
  createIngestionPool,
  INGESTION_TOPICS,
  type IngestionEngines,
} from '@hogbase/ingestion';
import { EmbeddedPostgresOpenError, startEmbeddedPostgres, type DataDirLock } from '@hogbase/postgres';
import {
  createKafkaClient,
  InProcessBus,
  KafkaIngestionProgress,
  type EventPublisher,
  type IngestionProgress,
} from '@hogbase/queue';

export interface StandaloneEngines {
  publisher: EventPublisher;
  ingestion: IngestionEngines;
  queue: string;
  ingestionProgress: IngestionProgress;
  /** After the services stopped: the queue drains what capture published. */
  close(): Promise<void>;
}

/** Ingestion's engines and capture's queue; on the in-process bus a publish resolves once ingestion wrote the events. */
export function openStandaloneEngines(
  config: StandaloneConfig,
  postgres: StandalonePostgres,
  logger: Logger,
): StandaloneEngines {
  const databaseUrl = postgres.url;
  const { client: clickhouse, events } = openClickHouse(config.clickhouse);
  const ingestionPool = createIngestionPool(
    { url: databaseUrl, poolSize: config.ingestion.database.poolSize },
    logger,
    postgres.connectInProcess,
  );
  const closeStores = async () => {
    await closeClickHouse(clickhouse);
    await ingestionPool.end();
  };
  const ingestionLogger = logger.child({ app: 'ingestion' });

  const { brokers } = config.kafka;
  if (brokers) {
    const kafka = { ...config.kafka, brokers };
    const publisher = createCapturePublisher(kafka, logger);
    const consumer = createIngestionConsumer(kafka, ingestionLogger);
    const progress = new KafkaIngestionProgress({
      kafka: createKafkaClient({ brokers, clientId: kafka.clientId, logger }, { quiet: true }),
      groupId: kafka.consumerGroupId,
      topics: INGESTION_TOPICS,
    });
    return {
      publisher,
      ingestion: {
        pool: ingestionPool,
        clickhouse,
        events,
        consumer,
        deadLetters: publisher,
        logger: ingestionLogger,
        databaseUrl,
      },
      queue: `Kafka ${brokers.join(',')}`,
      ingestionProgress: progress,
      async close() {
        await progress.close();
        await consumer.stop();
        await publisher.close();
        await closeStores();
      },
    };
  }
  // Dead letters are logged: nothing consumes them in-process.
  const bus = new InProcessBus({ logger });
  return {
    publisher: bus,
    ingestion: {
      pool: ingestionPool,
      clickhouse,
      events,
      consumer: bus,
      deadLetters: bus,
      logger: ingestionLogger,
      databaseUrl,
    },
    queue: 'in-process bus',
    ingestionProgress: bus,
    async close() {
      await bus.stop();
      await closeStores();
    },
  };
}

// Room for the admin CLI (pool of 2) beyond the app's pools, which hold all their connections under load.
const ADMIN_CLI_CONNECTIONS = 4;
const CAPTURE_LISTENER_CONNECTIONS = 1;

function embeddedPostgresConnections({ management, capture, ingestion, workers }: StandaloneConfig): number {
  return (
    management.database.poolSize +
    capture.databasePoolSize +
    ingestion.database.poolSize +
    workers.database.poolSize +
    CAPTURE_LISTENER_CONNECTIONS +
    STANDALONE_JOB_ENGINE_CONNECTIONS +
    1 +
    ADMIN_CLI_CONNECTIONS
  );
}

export interface StandalonePostgres {
  url: string;
  /** Embedded only: socketless, so a transaction's statements run without an event-loop turn between them. */
  connectInProcess?: () => Duplex;
  stop(): Promise<void>;
}

/** A PGlite that cannot open its files stops the start with a one-line message. */
export async function openStandalonePostgres(
  config: StandaloneConfig,
  lock: DataDirLock,
  logger: Logger,
): Promise<StandalonePostgres> {
  const { url } = config.management.database;
  if (url) return { url, stop: () => Promise.resolve() };
  const { dataDir } = config.management;
  const embedded = await startEmbeddedPostgres(dataDir, {
    maxConnections: embeddedPostgresConnections(config),
    lock,
    logger: logger.child({ component: 'embedded-postgres' }),
  }).catch((error: unknown) => {
    throw error instanceof EmbeddedPostgresOpenError
      ? new ConfigError('DATA_DIR', dataDir, error.message)
      : error;
  });
  return { url: embedded.url, connectInProcess: embedded.connectInProcess, stop: () => embedded.stop() };
}
