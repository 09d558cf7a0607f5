import { loadCaptureConfig } from '@hogbase/config';
import { launchService } from '@hogbase/service-runtime';
import { startCaptureProcess } from './capture.process';

/** Capture alone (split mode): events to Kafka, tokens and the SDKs' flag calls from Postgres. */
launchService({
  loadConfig: loadCaptureConfig,
  logLevel: (config) => config.logLevel,
  start: startCaptureProcess,
});
