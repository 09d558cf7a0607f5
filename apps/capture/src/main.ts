import cluster from 'node:cluster';
import pino from 'pino';
import { loadCaptureConfig, runMain, stopOnSignal } from '@hogbase/config';
import {
  clusterMetricsText,
  openCaptureEngines,
  reportMetricsToPrimary,
  startCaptureCluster,
  startCaptureService,
} from '@hogbase/capture-server';

/**
 * Capture alone (split mode): tokens and flags from the Postgres of DATABASE_URL, events to Kafka,
 * /_health, /_ready and /metrics on its own port. It also answers the SDKs' flag calls, as
 * PostHog's capture host does. With CAPTURE_WORKERS > 1 this process only supervises that many
 * workers, each running the service on the shared port (libs/capture-server/src/capture-cluster.ts).
 */
async function main(): Promise<void> {
  const config = loadCaptureConfig();
  const logger = pino({ level: config.logLevel });
  if (config.workers > 1 && cluster.isPrimary) {
    const workers = startCaptureCluster({ workers: config.workers, logger });
    logger.info(`capture: ${config.workers} workers on ${config.host}:${config.port}`);
    stopOnSignal(
      async (signal) => {
        logger.info({ signal }, 'capture stopping: every worker finishes its requests in flight');
        if (!(await workers.stop())) throw new Error('a capture worker did not stop cleanly');
      },
      (error) => logger.error({ err: error }, 'shutdown failed'),
    );
    return;
  }

  const engines = openCaptureEngines(config, logger);
  const service = await startCaptureService(config, engines, {
    metricsText: cluster.isWorker ? clusterMetricsText : undefined,
  });
  if (cluster.isWorker) reportMetricsToPrimary(service.metrics);
  logger.info(`capture on ${service.url}`);

  stopOnSignal(
    async (signal) => {
      logger.info({ signal }, 'capture stopping: no new requests, finishing those in flight');
      await service.stop();
      await engines.close();
    },
    (error) => logger.error({ err: error }, 'shutdown failed'),
  );
}

runMain(main);
