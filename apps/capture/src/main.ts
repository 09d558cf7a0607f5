import { loadCaptureConfig } from '@hogbase/config';
import { launchService } from '@hogbase/service-runtime';
import { startCaptureProcess } from './capture.process';

/**
 * Capture alone (split mode): tokens and flags from the Postgres of DATABASE_URL, events to Kafka,
 * /_health, /_ready and /metrics on its own port. It also answers the SDKs' flag calls, as
 * PostHog's capture host does. CAPTURE_WORKERS > 1 runs that many workers on the shared port
 * (libs/capture-server/src/capture-cluster.launcher.ts).
 */
launchService({
  loadConfig: loadCaptureConfig,
  logLevel: (config) => config.logLevel,
  start: startCaptureProcess,
});
