import { Registry } from 'prom-client';
import type { CheckResult, Readiness, RunningService } from './service.types';

/** Looks at one dependency: resolves `true` when it answers; a throw or a string says why not. */
export type Check = () => CheckResult | Promise<CheckResult>;

export interface ReadinessChecks {
  /** What the service cannot do its job without: one failing makes it not ready. */
  required: Record<string, Check>;
  /** Reported in the answer but never making the service not ready. */
  advisory?: Record<string, Check>;
}

/** A hanging dependency is as good as down; a little over Kubernetes' 1 s probe timeout. */
export const CHECK_TIMEOUT_MS = 2_000;

const MAX_REASON_LENGTH = 300;

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  return (message || 'failed').slice(0, MAX_REASON_LENGTH);
}

async function runCheck(check: Check, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(check), timeout]);
  } catch (error) {
    return reasonOf(error);
  } finally {
    clearTimeout(timer);
  }
}

async function runAll(
  checks: Record<string, Check>,
  timeoutMs: number,
): Promise<Record<string, CheckResult>> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((name) => runCheck(checks[name], timeoutMs)));
  return Object.fromEntries(names.map((name, index) => [name, results[index]]));
}

/** Runs every check at once, each bounded by `timeoutMs`: ready when every required one is `true`. */
export async function checkReadiness(
  { required, advisory = {} }: ReadinessChecks,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Readiness> {
  const [requiredResults, advisoryResults] = await Promise.all([
    runAll(required, timeoutMs),
    runAll(advisory, timeoutMs),
  ]);
  return {
    ready: Object.values(requiredResults).every((result) => result === true),
    checks: { ...requiredResults, ...advisoryResults },
  };
}

export function failingChecks(readiness: Readiness): string[] {
  return Object.entries(readiness.checks)
    .filter(([, result]) => result !== true)
    .map(([name]) => name);
}

/** Several services' answers as one: ready when each is; checks named `<service>.<check>`. */
export function combineReadiness(parts: Record<string, Readiness>): Readiness {
  const checks: Record<string, CheckResult> = {};
  for (const [service, readiness] of Object.entries(parts)) {
    for (const [name, result] of Object.entries(readiness.checks)) checks[`${service}.${name}`] = result;
    // A service that is not ready with every check passing (still starting) says so by name.
    if (!readiness.ready && Object.keys(readiness.checks).length === 0) checks[service] = 'not ready';
  }
  return { ready: Object.values(parts).every((readiness) => readiness.ready), checks };
}

/**
 * Services of one process (npm start) as one; `stop()` goes in the order given, so list the intake
 * (capture) first. Metric names are prefixed by service, so the merge never collides.
 */
export function combineServices(services: Record<string, RunningService>): RunningService {
  const entries = Object.entries(services);
  return {
    metrics: Registry.merge(entries.map(([, service]) => service.metrics)),
    async ready() {
      const answers = await Promise.all(entries.map(([, service]) => service.ready()));
      return combineReadiness(Object.fromEntries(entries.map(([name], index) => [name, answers[index]])));
    },
    async stop() {
      for (const [, service] of entries) await service.stop();
    },
  };
}
