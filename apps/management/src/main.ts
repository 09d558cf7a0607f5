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
import { createManagementApp } from '@hogbase/management-api';

/** The management API alone, against the Postgres of DATABASE_URL (split mode). */
async function main(): Promise<void> {
  // chDB writes event data under DATA_DIR when no ClickHouse server is set: owner-only files.
  process.umask(0o077);
  const config = loadManagementConfig();
  const logger = pino({ level: config.logLevel });
  if (!config.database.url) {
    throw new ConfigError(
      'DATABASE_URL',
      '',
      'is required when the management app runs alone (npm start embeds Postgres)',
    );
  }
  // The event listing reads this store; it connects on the first listing request.
  const clickhouse = loadClickHouseConfig();
  const app = await createManagementApp({ config, databaseUrl: config.database.url, clickhouse, logger });
  await app.listen(config.port, config.host);
  logger.info(
    {
      database: describeDatabase(config.database, config.dataDir),
      clickhouse: describeClickHouse(clickhouse),
    },
    `management API on http://${config.host}:${config.port}`,
  );

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'stopping');
      await app.close();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
