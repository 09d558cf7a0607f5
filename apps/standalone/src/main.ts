import 'reflect-metadata';
import path from 'node:path';
import pino from 'pino';
import { DataSource } from 'typeorm';
import {
  describeClickHouse,
  describeDatabase,
  loadStandaloneConfig,
  runMain,
  stopOnSignal,
} from '@hogbase/config';
import { BootstrapService, createManagementApp } from '@hogbase/management-api';
import { EmbeddedPostgres, startEmbeddedPostgres } from '@hogbase/postgres';
import { secureDataDir } from './data-dir';
import { PIPELINE_POSTGRES_CONNECTIONS, startEventPipeline } from './event-pipeline';
import { ensureInitialCredentials } from './first-run';

// NOTE: the embedded server refuses every connection past its limit, and the admin CLI run while
// the server is up (`npm run admin`, pool of 2) connects through this server. Under load the app's
// pool holds all of its connections, so the limit keeps room for the CLI beyond the app's pool.
const ADMIN_CLI_CONNECTIONS = 4;

/**
 * `npm start`: the whole platform in one process on embedded engines (PGlite for Postgres, chDB
 * for ClickHouse, an in-process bus) unless DATABASE_URL, CLICKHOUSE_URL or KAFKA_BROKERS name real
 * ones. Data lives under DATA_DIR, readable by its owner only; the embedded Postgres listens on a
 * Unix socket inside it, never on TCP.
 */
async function main(): Promise<void> {
  const config = loadStandaloneConfig();
  const { management } = config;
  const logger = pino({ level: management.logLevel });
  // Before anything opens a file under DATA_DIR: what chDB and PGlite create is then owner-only.
  await secureDataDir(management.dataDir);
  const { dataPath: clickhouseDataPath } = config.clickhouse;
  if (!config.clickhouse.url && path.relative(management.dataDir, clickhouseDataPath).startsWith('..')) {
    await secureDataDir(clickhouseDataPath); // CLICKHOUSE_DATA_PATH outside DATA_DIR.
  }

  let embedded: EmbeddedPostgres | undefined;
  if (!management.database.url) {
    embedded = await startEmbeddedPostgres(management.dataDir, {
      maxConnections: management.database.poolSize + PIPELINE_POSTGRES_CONNECTIONS + ADMIN_CLI_CONNECTIONS,
    });
  }
  const databaseUrl = management.database.url ?? embedded!.url;
  const app = await createManagementApp({
    config: management,
    databaseUrl,
    clickhouse: config.clickhouse,
    logger,
  });

  const credentialsFile = await ensureInitialCredentials(
    management.dataDir,
    config.initialAdminEmail,
    app.get(DataSource),
    app.get(BootstrapService),
  );
  if (credentialsFile) logger.info({ file: credentialsFile }, 'first run: initial credentials written');

  const pipeline = await startEventPipeline(config, databaseUrl, logger);
  await pipeline.capture.listen({ host: config.capture.host, port: config.capture.port });
  await app.listen(management.port, management.host);
  logger.info(
    {
      database: describeDatabase(management.database, management.dataDir),
      clickhouse: describeClickHouse(config.clickhouse),
      queue: config.kafka.brokers ? `Kafka ${config.kafka.brokers.join(',')}` : 'in-process bus',
    },
    `management API on http://${management.host}:${management.port}, capture on http://${config.capture.host}:${config.capture.port}`,
  );

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'stopping');
      await pipeline.stop();
      await app.close();
      await embedded?.stop();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
