import type { Registry } from 'prom-client';

/** One check of a readiness answer: `true` when it passes; otherwise `false`, or a string saying why not. */
export type CheckResult = boolean | string;

/** What `/_ready` answers: whether the service can do its job now, and what it looked at. */
export interface Readiness {
  ready: boolean;
  /**
   * Each dependency or part the service checked. A check may fail without making the service not
   * ready (capture still serves known tokens with Postgres down): `ready` is the verdict.
   */
  checks: Record<string, CheckResult>;
}

/** What probes read: `/_ready` and `/metrics`. */
export interface ProbedService {
  ready(): Promise<Readiness>;
  readonly metrics: Registry;
}

/**
 * The lifecycle contract of every service (`startCaptureService`, `startIngestionService`,
 * `startManagementService`, …): started by its lib's `start…Service(config, engines)`, probed by
 * the process that runs it, stopped once.
 *
 * `stop()` stops intake first, finishes what is in flight and lets go of what the service opened
 * itself. The engines it was given (pools, queue clients, ClickHouse) belong to the caller, which
 * closes them after the service stopped.
 */
export interface RunningService extends ProbedService {
  stop(): Promise<void>;
}
