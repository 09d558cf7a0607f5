import 'reflect-metadata';
import pino from 'pino';
import { startCaptureService } from '@hogbase/capture-server';
import {
  describeClickHouse,
  describeDatabase,
  loadStandaloneConfig,
  runMain,
  stopOnSignal,
} from '@hogbase/config';
import { startIngestionService } from '@hogbase/ingestion';
import { startManagementService } from '@hogbase/management-api';
import { secureDataDirs } from './data-dir';
import { firstRun } from './first-run';
import { openStandaloneEngines, openStandalonePostgres } from './standalone-engines';

/**
 * `npm start`: the three services in one process on embedded engines (PGlite, chDB, the in-process
 * bus) unless DATABASE_URL, CLICKHOUSE_URL or KAFKA_BROKERS name real ones. The management port
 * listens first and answers /_ready and /metrics for the whole process; ingestion joins its queue
 * in the background. Data lives under DATA_DIR, owner-only.
 */
async function main(): Promise<void> {
  const config = loadStandaloneConfig();
  const { management, clickhouse } = config;
  const logger = pino({ level: management.logLevel });
  await secureDataDirs(config); // Before anything opens a file under DATA_DIR.
  const postgres = await openStandalonePostgres(config);
  const api = await startManagementService(
    management,
    { databaseUrl: postgres.url, clickhouse, logger },
    { companions: ['capture', 'ingestion'] },
  );
  await firstRun(api.app, management.dataDir, config.initialAdminEmail, logger);

  const engines = openStandaloneEngines(config, postgres.url, logger);
  const ingestion = await startIngestionService(config.ingestion, engines.ingestion);
  const capture = await startCaptureService(config.capture, engines.capture);
  api.include('ingestion', ingestion);
  api.include('capture', capture);
  const database = describeDatabase(management.database, management.dataDir);
  logger.info(
    { database, clickhouse: describeClickHouse(clickhouse), queue: engines.queue },
    `management API on ${api.url}, capture on ${capture.url}`,
  );

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'stopping');
      await capture.stop(); // Intake first: what it published drains into storage.
      await ingestion.stop();
      await engines.close();
      await api.stop();
      await postgres.stop();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
