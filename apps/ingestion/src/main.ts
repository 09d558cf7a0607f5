import pino from 'pino';
import { loadIngestionConfig, runMain, stopOnSignal } from '@hogbase/config';
import { openIngestionEngines, startIngestionService } from '@hogbase/ingestion';
import { startProbeServer } from '@hogbase/service-runtime';

/**
 * Ingestion alone (split mode): Kafka → persons and groups in Postgres → events in ClickHouse,
 * committing offsets only after both writes. Probes on INGESTION_PORT (default 8020). SIGTERM
 * stops intake, finishes the batch in flight, commits, then exits.
 */
async function main(): Promise<void> {
  const config = loadIngestionConfig();
  const logger = pino({ level: config.logLevel }).child({ app: 'ingestion' });
  const engines = openIngestionEngines(config, logger);
  const service = await startIngestionService(config, engines);
  const probes = await startProbeServer(service, {
    host: config.host,
    port: config.port,
    logger,
    metricsToken: config.metricsToken,
  });
  logger.info(`ingestion probes on ${probes.url}/_ready`);

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'ingestion stopping: draining the batch in flight');
      await service.stop();
      await engines.close();
      await probes.close();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
