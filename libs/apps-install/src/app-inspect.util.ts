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
const METRICS_REPORT = 'inspect.metrics';

export interface InspectAppOptions {
  /** SECURITY: code from outside; a busy loop on the caller's thread would hold the API's requests. */
  sandboxes: Pick<SandboxPool, 'createSandbox'>;
  /** Default 64 MiB. */
  memoryLimitBytes?: number;
  /** Default 1 s: loading an app only defines functions. */
  timeLimitMs?: number;
}

/**
 * Stand-ins for the runtime's `require`, enough for an app's top level to run. The `setup` source,
 * so the app's own code (and its line numbers) stays untouched.
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

/** The marker is random per inspection: the app cannot report metrics of its own choosing. */
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
 * What PostHog records as `capabilities` and `metrics`. A full sandbox budget rejects with the
 * pool's SandboxBudgetError (try again); the app's own failures are {@link AppInstallError}.
 */
export async function inspectApp(indexCode: string, options: InspectAppOptions): Promise<InspectedApp> {
  const marker = `__hogbase_metrics_${randomUUID()}`;
  let reported: SandboxJson | undefined;
  const sandbox = await options.sandboxes.createSandbox({
    memoryLimitBytes: options.memoryLimitBytes ?? 64 * 1024 * 1024,
    timeLimitMs: options.timeLimitMs ?? 1000,
    hostFunctions: {
      // TRICKY: the trailer's host call arrives before the load's answer, so it is here once `load` resolves.
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
