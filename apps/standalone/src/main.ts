import 'reflect-metadata';
import { ClickHouseEngineError } from '@hogbase/clickhouse';
import { ConfigError, loadStandaloneConfig } from '@hogbase/config';
import { launchService } from '@hogbase/service-runtime';
import { startStandalone } from './standalone';

/**
 * `npm start`: capture, ingestion and the management API in one process on embedded engines
 * (PGlite, chDB, the in-process bus) unless DATABASE_URL, CLICKHOUSE_URL or KAFKA_BROKERS name
 * real ones. Data lives under DATA_DIR, owner-only, held by this process alone.
 */
launchService({
  loadConfig: loadStandaloneConfig,
  logLevel: (config) => config.management.logLevel,
  start: async (config, logger) => {
    const platform = await startStandalone(config, logger).catch((error: unknown) => {
      // chDB that cannot open its data path stops the start as a bad setting does: one line, exit 1.
      if (error instanceof ClickHouseEngineError && !config.clickhouse.url) {
        throw new ConfigError('CLICKHOUSE_DATA_PATH', config.clickhouse.dataPath, error.message);
      }
      throw error;
    });
    return { stopping: 'stopping', stop: () => platform.stop() };
  },
});
