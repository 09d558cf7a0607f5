import 'reflect-metadata';
import pino from 'pino';
import { ClickHouseEngineError } from '@hogbase/clickhouse';
import { ConfigError, loadStandaloneConfig, runMain, stopOnSignal } from '@hogbase/config';
import { startStandalone } from './standalone';

/**
 * `npm start`: capture, ingestion and the management API in one process on embedded engines
 * (PGlite, chDB, the in-process bus) unless DATABASE_URL, CLICKHOUSE_URL or KAFKA_BROKERS name
 * real ones. Data lives under DATA_DIR, owner-only, held by this process alone.
 */
async function main(): Promise<void> {
  const config = loadStandaloneConfig();
  const logger = pino({ level: config.management.logLevel });
  const platform = await startStandalone(config, logger).catch((error: unknown) => {
    // chDB that cannot open its data path stops the start as a bad setting does: one line, exit 1.
    if (error instanceof ClickHouseEngineError && !config.clickhouse.url) {
      throw new ConfigError('CLICKHOUSE_DATA_PATH', config.clickhouse.dataPath, error.message);
    }
    throw error;
  });
  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'stopping');
      await platform.stop();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
