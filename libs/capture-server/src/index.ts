// The capture service and what runs it: alone, in a cluster of workers, or inside npm start.
export {
  createCapturePublisher,
  openCaptureEngines,
  startCaptureService,
  type CaptureService,
} from './capture.service';
export { clusterMetricsText, reportMetricsToPrimary, startCaptureCluster } from './capture-cluster.launcher';
export { createCapturePool } from './postgres-pool.util';

// The app without the service around it, for tests that wire their own engines.
export { buildCaptureApp } from './capture.app';
export { createFlagServices } from './flags/flag-services.util';
export { ProjectTokenCache } from './project-token.cache';
