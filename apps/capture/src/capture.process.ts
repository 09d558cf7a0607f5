import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { CaptureConfig } from '@hogbase/config';
import {
  clusterMetricsText,
  openCaptureEngines,
  reportMetricsToPrimary,
  startCaptureCluster,
  startCaptureService,
} from '@hogbase/capture-server';
import type { LaunchedProcess } from '@hogbase/service-runtime';

/** With CAPTURE_WORKERS > 1 the primary only supervises; each worker runs the service on the shared port. */
export async function startCaptureProcess(config: CaptureConfig, logger: Logger): Promise<LaunchedProcess> {
  if (config.workers > 1 && cluster.isPrimary) {
    const workers = startCaptureCluster({ workers: config.workers, logger });
    logger.info(`capture: ${config.workers} workers on ${config.host}:${config.port}`);
    return {
      stopping: 'capture stopping: every worker finishes its requests in flight',
      stop: async () => {
        if (!(await workers.stop())) throw new Error('a capture worker did not stop cleanly');
      },
    };
  }
  const engines = openCaptureEngines(config, logger);
  const service = await startCaptureService(config, engines, {
    metricsText: cluster.isWorker ? clusterMetricsText : undefined,
  });
  if (cluster.isWorker) reportMetricsToPrimary(service.metrics);
  logger.info(`capture on ${service.url}`);
  return {
    stopping: 'capture stopping: no new requests, finishing those in flight',
    stop: async () => {
      await service.stop();
      await engines.close();
    },
  };
}
