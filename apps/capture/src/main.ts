import pino from 'pino';
import { ConfigError, loadCaptureConfig, loadKafkaConfig, runMain, stopOnSignal } from '@hogbase/config';
import { KafkaEventPublisher } from '@hogbase/queue';
import {
  ProjectTokenCache,
  buildCaptureApp,
  createCapturePool,
  createFlagServices,
} from '@hogbase/capture-server';

/**
 * Capture alone (split mode): tokens and flags from the Postgres of DATABASE_URL, events to Kafka.
 * It also answers the SDKs' flag calls, as PostHog's capture host does.
 */
async function main(): Promise<void> {
  const config = loadCaptureConfig();
  const kafka = loadKafkaConfig();
  const logger = pino({ level: config.logLevel });
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required when capture runs alone');
  if (!kafka.brokers) throw new ConfigError('KAFKA_BROKERS', '', 'is required when capture runs alone');

  // Flag calls read persons per request: more connections than token lookups alone would need.
  const pool = createCapturePool(config.databaseUrl, logger, 10);
  const publisher = new KafkaEventPublisher({
    brokers: kafka.brokers,
    clientId: `${kafka.clientId}-capture`,
    timeoutMs: kafka.producerTimeoutMs,
    maxMessageBytes: kafka.maxMessageBytes,
    logger,
  });
  const { app } = buildCaptureApp({
    publisher,
    tokens: new ProjectTokenCache(pool),
    logger,
    batchBodyLimit: config.batchBodyLimit,
    eventBodyLimit: config.eventBodyLimit,
    maxDecodedBytes: config.maxDecodedBytes,
    trustProxy: config.trustProxy,
    maxEventBytes: kafka.maxMessageBytes - 4_096,
    flags: createFlagServices(pool),
    ready: async () => {
      await pool.query('SELECT 1');
      return true;
    },
  });
  await app.listen({ host: config.host, port: config.port });

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'capture stopping: no new requests, finishing those in flight');
      await app.close();
      await publisher.close();
      await pool.end();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
