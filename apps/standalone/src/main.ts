import 'reflect-metadata';
import pino from 'pino';
import { loadStandaloneConfig, runMain, stopOnSignal } from '@hogbase/config';
import { startStandalone } from './standalone';

/**
 * `npm start`: capture, ingestion and the management API in one process on embedded engines
 * (PGlite, chDB, the in-process bus) unless DATABASE_URL, CLICKHOUSE_URL or KAFKA_BROKERS name
 * real ones. Data lives under DATA_DIR, owner-only.
 */
async function main(): Promise<void> {
  const config = loadStandaloneConfig();
  const logger = pino({ level: config.management.logLevel });
  const platform = await startStandalone(config, logger);
  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'stopping');
      await platform.stop();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
