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
  /** Where capture (on its thread) and the import apps publish events. */
  publisher: EventPublisher;
  ingestion: IngestionEngines;
  /** What carries events from capture to ingestion, for the log. */
  queue: string;
  /** How far ingestion has got (the batch-export runs wait for it). */
  ingestionProgress: IngestionProgress;
  /** After the services stopped: the queue (draining what capture published), ClickHouse, the pools. */
  close(): Promise<void>;
}

/**
 * The engines of ingestion and the queue capture publishes to in npm start: the Postgres at
 * `postgres.url` through ingestion's pool (capture opens its own on its thread), connected in
 * process when it is the embedded one (StandalonePostgres.connectInProcess), chDB under
 * DATA_DIR (or CLICKHOUSE_URL's server), and the in-process bus (or Kafka when KAFKA_BROKERS is
 * set). On the bus a publish resolves once ingestion wrote the events, so capture's 200 still
 * means stored.
 */
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
  // Both ends in one object; dead letters are logged (nothing consumes them in-process).
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

// NOTE: the embedded server refuses every connection past its limit, and the admin CLI run while
// the server is up (`npm run admin`, pool of 2) connects through this server. Under load the app's
// pool holds all of its connections, so the limit keeps room for the CLI beyond the app's pool.
const ADMIN_CLI_CONNECTIONS = 4;
/** Capture's LISTEN connection for project changes (project-changes.listener.ts). */
const CAPTURE_LISTENER_CONNECTIONS = 1;

/**
 * The embedded Postgres's connection limit: the services' pools, capture's listener, the job
 * engine's, one spare, and the admin CLI's.
 */
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
  /**
   * The embedded Postgres only: a connection without its socket, for the pool of the hot path
   * (ingestion's persons). Its transactions' statements then follow each other without a turn of
   * the event loop between them, where capture's and the bus's work would otherwise slip in.
   */
  connectInProcess?: () => Duplex;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL's Postgres, or the embedded one under DATA_DIR (on an owner-only Unix socket), which
 * `lock` (DATA_DIR's, held by this process) then tells the admin CLI where to find. A PGlite that
 * cannot open its files stops the start with a one-line message naming the directory.
 */
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
