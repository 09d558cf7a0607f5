import type { Registry } from 'prom-client';

/** One check of a readiness answer: `true` when it passes; otherwise `false`, or a string saying why not. */
export type CheckResult = boolean | string;

export interface Readiness {
  ready: boolean;
  /** A check may fail with `ready` true (capture serves known tokens with Postgres down). */
  checks: Record<string, CheckResult>;
}

export interface ProbedService {
  ready(): Promise<Readiness>;
  readonly metrics: Registry;
}

/**
 * Every service, started by its lib's `start…Service(config, engines)`. `stop()` stops intake first,
 * then finishes in-flight work; the engines it was given belong to the caller, which closes them after.
 */
export interface RunningService extends ProbedService {
  stop(): Promise<void>;
}
