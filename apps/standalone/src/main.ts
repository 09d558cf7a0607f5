import 'reflect-metadata';
import { ClickHouseEngineError } from '@hogbase/clickhouse';
import { ConfigError, loadStandaloneConfig } from '@hogbase/config';
import { launchService } from '@hogbase/service-runtime';
import { startStandalone } from './standalone.process';

/** `npm start`: every service in one process on embedded engines unless real ones are configured. */
launchService({
  loadConfig: loadStandaloneConfig,
  logLevel: (config) => config.management.logLevel,
  start: async (config, logger) => {
    const platform = await startStandalone(config, logger).catch((error: unknown) => {
      // As a bad setting: one line, exit 1.
      if (error instanceof ClickHouseEngineError && !config.clickhouse.url) {
        throw new ConfigError('CLICKHOUSE_DATA_PATH', config.clickhouse.dataPath, error.message);
      }
      throw error;
    });
    return { stopping: 'stopping', stop: () => platform.stop() };
  },
});
