import type { Logger } from 'pino';
import {
  describeClickHouse,
  describeDatabase,
  STANDALONE_JOB_ENGINE_CONNECTIONS,
  type StandaloneConfig,
} from '@hogbase/config';
import { registerOwnPort } from '@hogbase/egress';
import { startIngestionService } from '@hogbase/ingestion';
import { startManagementService } from '@hogbase/management-api';
import { openWorkersEngines, startWorkersService } from '@hogbase/workers';
import { startCaptureThread } from './capture-thread/capture-thread.launcher';
import { announcePorts, holdDataDirs } from './data-dir.util';
import { firstRun } from './first-run.util';
import { openStandaloneEngines, openStandalonePostgres } from './standalone-engines.util';

/**
 * The four services in one process over shared engines, capture on its own thread. The management
 * port answers /_ready and /metrics for the whole process. `stop()` stops intake first, so what
 * capture published drains into storage.
 */
export async function startStandalone(
  config: StandaloneConfig,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const { management, clickhouse } = config;
  const dataDirLock = await holdDataDirs(config); // Before anything opens a file under DATA_DIR.
  const postgres = await openStandalonePostgres(config, dataDirLock, logger);
  const api = await startManagementService(
    management,
    { databaseUrl: postgres.url, clickhouse, logger },
    { companions: ['capture', 'ingestion', 'workers'] },
  );
  await firstRun(api.app, management.dataDir, config.initialAdminEmail, logger);

  const engines = openStandaloneEngines(config, postgres, logger);
  const ingestion = await startIngestionService(config.ingestion, engines.ingestion);
  const capture = await startCaptureThread({
    config: config.capture,
    logLevel: management.logLevel,
    databaseUrl: postgres.url,
    publisher: engines.publisher,
    logger,
  });
  // Outgoing requests (apps' fetch, webhooks, exports) are refused capture's port.
  const releaseCapturePort = registerOwnPort(Number(new URL(capture.url).port));
  // The workers share chDB (one per process), Postgres and the queue capture publishes to.
  const workersEngines = await openWorkersEngines(config.workers, logger.child({ app: 'workers' }), {
    databaseUrl: postgres.url,
    ingestion: engines.ingestionProgress,
    publisher: engines.publisher,
  });
  const workers = await startWorkersService(config.workers, workersEngines, {
    jobEngineConnections: STANDALONE_JOB_ENGINE_CONNECTIONS,
  });
  api.include('ingestion', ingestion);
  api.include('capture', capture);
  api.include('workers', workers);
  logger.info(
    {
      database: describeDatabase(management.database, management.dataDir),
      clickhouse: describeClickHouse(clickhouse),
      queue: engines.queue,
    },
    `management API on ${api.url}, capture on ${capture.url}`,
  );
  announcePorts(dataDirLock, { management: api.url, capture: capture.url });

  return {
    async stop() {
      // Intake first; then the workers, so an import run finishes while the queue still takes its events.
      await capture.stop();
      releaseCapturePort();
      await workers.stop();
      await workersEngines.close();
      await ingestion.stop();
      await engines.close();
      await api.stop();
      await postgres.stop();
      await dataDirLock.release();
    },
  };
}
