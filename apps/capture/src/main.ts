import pino from 'pino';
import { loadCaptureConfig, runMain, stopOnSignal } from '@hogbase/config';
import { openCaptureEngines, startCaptureService } from '@hogbase/capture-server';

/**
 * Capture alone (split mode): tokens and flags from the Postgres of DATABASE_URL, events to Kafka,
 * /_health, /_ready and /metrics on its own port. It also answers the SDKs' flag calls, as
 * PostHog's capture host does.
 */
async function main(): Promise<void> {
  const config = loadCaptureConfig();
  const logger = pino({ level: config.logLevel });
  const engines = openCaptureEngines(config, logger);
  const service = await startCaptureService(config, engines);
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
