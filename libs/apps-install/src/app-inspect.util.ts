import { randomUUID } from 'node:crypto';
import {
  SandboxAppError,
  SandboxBudgetError,
  SandboxError,
  type SandboxJson,
  type SandboxPool,
} from '@hogbase/apps-sandbox';
import { AppInstallError } from './app-install.error';
import type { AppMetricKind, InspectedApp } from './app-install.types';
import { RUNTIME_MODULES } from './app-build.util';

const SCHEDULED_TASKS = ['runEveryMinute', 'runEveryHour', 'runEveryDay'];
const METRIC_KINDS: readonly AppMetricKind[] = ['sum', 'max', 'min'];
/** The host function the inspection's trailer reports the app's `metrics` export through. */
const METRICS_REPORT = 'inspect.metrics';

export interface InspectAppOptions {
  /**
   * Where the app's top level runs: a pool's worker threads, never the caller's thread. SECURITY:
   * it is code from outside, and a busy loop would hold everything else that thread serves (the
   * management API's requests) for the whole time limit.
   */
  sandboxes: Pick<SandboxPool, 'createSandbox'>;
  /** Default 64 MiB. */
  memoryLimitBytes?: number;
  /** Default 1 s (of CPU, and of wall clock): loading an app only defines functions. */
  timeLimitMs?: number;
}

/**
 * Stand-ins for what the runtime provides through `require`, enough for an app's top level to run
 * (`const { RetryError } = require('@posthog/plugin-scaffold')`, `const fetch = require('node-fetch')`),
 * and the reporter of the trailer below, which keeps the host bridge to itself.
 * Run as the sandbox's `setup` source, so the app's own code (and its line numbers) stays untouched.
 */
function setupSource(): string {
  const modules = JSON.stringify(RUNTIME_MODULES);
  return (
    `(function (host) { const call = host.call; ` +
    `globalThis.__hogbaseInspectReport = function (marker, metrics) { call(${JSON.stringify(METRICS_REPORT)}, marker, metrics); }; ` +
    `})(globalThis.__hogbaseHost); ` +
    `globalThis.require = (function (known) { ` +
    `class RetryError extends Error { constructor(message) { super(message); this.name = 'RetryError'; } } ` +
    `const unavailable = function () { return Promise.reject(new Error('fetch is not available while the app loads')); }; ` +
    `const modules = { '@posthog/plugin-scaffold': { RetryError }, 'node-fetch': Object.assign(unavailable, { default: unavailable }), ` +
    `url: { URL: globalThis.URL, URLSearchParams: globalThis.URLSearchParams }, buffer: { Buffer: globalThis.Buffer } }; ` +
    `return function require(name) { if (known.indexOf(name) === -1) throw new Error("Cannot find module '" + name + "'"); ` +
    `return modules[name] || {}; }; })(${modules}); `
  );
}

/**
 * Runs after the app's top level and reports its exported `metrics` to the host. The marker is
 * random per inspection, so the app cannot report metrics of its own choosing.
 */
function metricsTrailer(marker: string): string {
  return (
    `\n;(function () { try { var exported = module.exports; var metrics; ` +
    `if (exported && exported.default && typeof exported.default === 'object' && exported.default.metrics !== undefined) metrics = exported.default.metrics; ` +
    `else if (exported && exported.metrics !== undefined) metrics = exported.metrics; else metrics = globalThis.metrics; ` +
    `__hogbaseInspectReport(${JSON.stringify(marker)}, metrics === undefined ? null : metrics); } catch (error) {} })();\n`
  );
}

function readMetrics(metrics: SandboxJson | undefined): Record<string, AppMetricKind> {
  if (metrics === null || metrics === undefined) return {};
  if (typeof metrics !== 'object' || Array.isArray(metrics)) {
    throw new AppInstallError('The app exports "metrics" that is not an object');
  }
  const result: Record<string, AppMetricKind> = {};
  for (const [name, kind] of Object.entries(metrics)) {
    const normalized = typeof kind === 'string' ? kind.toLowerCase() : kind;
    if (!METRIC_KINDS.includes(normalized as AppMetricKind)) {
      throw new AppInstallError(
        `Invalid metric type for "${name}": must be one of ${METRIC_KINDS.join(', ')}`,
      );
    }
    result[name] = normalized as AppMetricKind;
  }
  return result;
}

/**
 * Loads built app code in a fresh sandbox of `options.sandboxes` to learn what PostHog records as
 * `capabilities` and `metrics`. The app's top level runs (with no `fetch`), bounded like any app
 * call. A sandbox budget with no room now rejects with the pool's SandboxBudgetError (not the app's
 * fault: the caller answers "try again"); the app's own failures are {@link AppInstallError}.
 */
export async function inspectApp(indexCode: string, options: InspectAppOptions): Promise<InspectedApp> {
  const marker = `__hogbase_metrics_${randomUUID()}`;
  let reported: SandboxJson | undefined;
  const sandbox = await options.sandboxes.createSandbox({
    memoryLimitBytes: options.memoryLimitBytes ?? 64 * 1024 * 1024,
    timeLimitMs: options.timeLimitMs ?? 1000,
    hostFunctions: {
      // TRICKY: the trailer's host call leaves the sandbox's thread before the load's answer, and
      // the pool runs it on arrival, so the report is here once `load` resolves.
      [METRICS_REPORT]: (reportMarker, metrics) => {
        if (reportMarker === marker) reported = metrics;
        return Promise.resolve(undefined);
      },
    },
  });
  try {
    const loaded = await sandbox.load(indexCode + metricsTrailer(marker), { setup: setupSource() });
    return {
      capabilities: {
        methods: loaded.methods.filter((method) => !SCHEDULED_TASKS.includes(method)),
        jobs: loaded.jobs,
        scheduled_tasks: loaded.methods.filter((method) => SCHEDULED_TASKS.includes(method)),
      },
      metrics: readMetrics(reported),
    };
  } catch (error) {
    if (error instanceof AppInstallError || error instanceof SandboxBudgetError) throw error;
    if (error instanceof SandboxAppError) {
      const name = error.appErrorName && error.appErrorName !== 'Error' ? `${error.appErrorName}: ` : '';
      throw new AppInstallError(`The app failed to load: ${name}${error.message}`);
    }
    if (error instanceof SandboxError) throw new AppInstallError(`The app failed to load: ${error.message}`);
    throw error;
  } finally {
    sandbox.dispose();
  }
}
