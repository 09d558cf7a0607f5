import 'reflect-metadata';
import { ConfigError, describeClickHouse, describeDatabase, loadManagementConfig } from '@hogbase/config';
import { startManagementService } from '@hogbase/management-api';
import { launchService } from '@hogbase/service-runtime';

/** The management API alone, against the Postgres of DATABASE_URL (split mode). */
launchService({
  loadConfig: () => {
    // chDB writes event data under DATA_DIR when no ClickHouse server is set: owner-only files.
    process.umask(0o077);
    return loadManagementConfig();
  },
  logLevel: (config) => config.logLevel,
  start: async (config, logger) => {
    const { database, clickhouse } = config;
    const alone = 'is required when the management app runs alone (npm start embeds Postgres)';
    if (!database.url) throw new ConfigError('DATABASE_URL', '', alone);
    // The event listing reads ClickHouse; it connects on the first listing request.
    const service = await startManagementService(config, { databaseUrl: database.url, clickhouse, logger });
    const described = {
      database: describeDatabase(database, config.dataDir),
      clickhouse: describeClickHouse(clickhouse),
    };
    logger.info(described, `management API on ${service.url}`);
    return { stopping: 'stopping', stop: () => service.stop() };
  },
});
