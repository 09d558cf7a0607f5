import pino from 'pino';
import { loadWorkersConfig, runMain, stopOnSignal } from '@hogbase/config';
import { startProbeServer } from '@hogbase/service-runtime';
import { openWorkersEngines, startWorkersService } from '@hogbase/workers';

/**
 * The workers alone (split mode): batch-export runs and backfills on pg-boss over the Postgres of
 * DATABASE_URL, reading a ClickHouse server. Probes on WORKERS_PORT (default 8030). SIGTERM lets
 * the runs in progress finish (8 s), then hands them back to the job engine.
 */
async function main(): Promise<void> {
  const config = loadWorkersConfig();
  const logger = pino({ level: config.logLevel }).child({ app: 'workers' });
  const engines = await openWorkersEngines(config, logger);
  const service = await startWorkersService(config, engines);
  const probes = await startProbeServer(service, {
    host: config.host,
    port: config.port,
    logger,
    metricsToken: config.metricsToken,
  });
  logger.info(`workers probes on ${probes.url}/_ready`);

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'workers stopping: finishing the runs in progress');
      await service.stop();
      await engines.close();
      await probes.close();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
