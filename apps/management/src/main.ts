import 'reflect-metadata';
import pino from 'pino';
import {
  ConfigError,
  describeClickHouse,
  describeDatabase,
  loadClickHouseConfig,
  loadManagementConfig,
  runMain,
  stopOnSignal,
} from '@hogbase/config';
import { startManagementService } from '@hogbase/management-api';

/** The management API alone, against the Postgres of DATABASE_URL (split mode). */
async function main(): Promise<void> {
  // chDB writes event data under DATA_DIR when no ClickHouse server is set: owner-only files.
  process.umask(0o077);
  const config = loadManagementConfig();
  const logger = pino({ level: config.logLevel });
  const databaseUrl = config.database.url;
  const alone = 'is required when the management app runs alone (npm start embeds Postgres)';
  if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', alone);
  // The event listing reads this store; it connects on the first listing request.
  const clickhouse = loadClickHouseConfig();
  const service = await startManagementService(config, { databaseUrl, clickhouse, logger });
  const database = describeDatabase(config.database, config.dataDir);
  logger.info({ database, clickhouse: describeClickHouse(clickhouse) }, `management API on ${service.url}`);

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'stopping');
      await service.stop();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
