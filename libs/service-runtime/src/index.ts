export type { CheckResult, ProbedService, Readiness, RunningService } from './service.types';
export { checkReadiness, combineReadiness, type Check, type ReadinessChecks } from './readiness.util';
export { readinessResponse, type NotReadyBody, type ReadyBody } from './probe-response.presenter';
export { startProbeServer, type ProbeServer, type ProbeServerOptions } from './probe.server';
export { refuseMetricsRequest } from './metrics-access.util';
export {
  launchProbedService,
  launchService,
  type LaunchedProcess,
  type ProbedServiceConfig,
  type ServiceLaunch,
} from './service.launcher';
