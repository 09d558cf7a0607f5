import { randomUUID } from 'node:crypto';
import { createSandbox, SandboxAppError, SandboxError, type SandboxLogLine } from '@hogbase/apps-sandbox';
import { AppInstallError } from './app-install.error';
import type { AppMetricKind, InspectedApp } from './app-install.types';
import { RUNTIME_MODULES } from './app-build.util';

const SCHEDULED_TASKS = ['runEveryMinute', 'runEveryHour', 'runEveryDay'];
const METRIC_KINDS: readonly AppMetricKind[] = ['sum', 'max', 'min'];

export interface InspectAppOptions {
  /** Default 64 MiB. */
  memoryLimitBytes?: number;
  /** Default 1 s: loading an app only defines functions. */
  timeLimitMs?: number;
}

/**
 * Stand-ins for what the runtime provides through `require`, enough for an app's top level to run
 * (`const { RetryError } = require('@posthog/plugin-scaffold')`, `const fetch = require('node-fetch')`).
 * Run as the sandbox's `setup` source, so the app's own code (and its line numbers) stays untouched.
 */
function requireShim(): string {
  const modules = JSON.stringify(RUNTIME_MODULES);
  return (
    `globalThis.__hogbaseInspectLog = console.log; globalThis.require = (function (known) { ` +
    `class RetryError extends Error { constructor(message) { super(message); this.name = 'RetryError'; } } ` +
    `const unavailable = function () { return Promise.reject(new Error('fetch is not available while the app loads')); }; ` +
    `const modules = { '@posthog/plugin-scaffold': { RetryError }, 'node-fetch': Object.assign(unavailable, { default: unavailable }), ` +
    `url: { URL: globalThis.URL, URLSearchParams: globalThis.URLSearchParams }, buffer: { Buffer: globalThis.Buffer } }; ` +
    `return function require(name) { if (known.indexOf(name) === -1) throw new Error("Cannot find module '" + name + "'"); ` +
    `return modules[name] || {}; }; })(${modules}); `
  );
}

/**
 * Runs after the app's top level and reports its exported `metrics` through the console, the only
 * channel out of a loaded sandbox besides capabilities. The marker is random per inspection, so
 * a line the app logs itself cannot be taken for it.
 */
function metricsTrailer(marker: string): string {
  return (
    `\n;(function () { try { var exported = module.exports; var metrics; ` +
    `if (exported && exported.default && typeof exported.default === 'object' && exported.default.metrics !== undefined) metrics = exported.default.metrics; ` +
    `else if (exported && exported.metrics !== undefined) metrics = exported.metrics; else metrics = globalThis.metrics; ` +
    `__hogbaseInspectLog(${JSON.stringify(marker)} + JSON.stringify(metrics === undefined ? null : metrics)); } catch (error) {} })();\n`
  );
}

function readMetrics(json: string | null): Record<string, AppMetricKind> {
  if (json === null) return {};
  const metrics: unknown = JSON.parse(json);
  if (metrics === null) return {};
  if (typeof metrics !== 'object' || Array.isArray(metrics)) {
    throw new AppInstallError('The app exports "metrics" that is not an object');
  }
  const result: Record<string, AppMetricKind> = {};
  for (const [name, kind] of Object.entries(metrics as Record<string, unknown>)) {
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
 * Loads built app code in a fresh sandbox to learn what PostHog records as `capabilities` and
 * `metrics`. The app's top level runs (with no `fetch`), so this is bounded like any app call.
 */
export async function inspectApp(indexCode: string, options: InspectAppOptions = {}): Promise<InspectedApp> {
  const marker = `__hogbase_metrics_${randomUUID()}:`;
  let metricsJson: string | null = null;
  const onLog = (line: SandboxLogLine): void => {
    if (line.level === 'log' && line.message.startsWith(marker))
      metricsJson = line.message.slice(marker.length);
  };
  const sandbox = await createSandbox({
    memoryLimitBytes: options.memoryLimitBytes ?? 64 * 1024 * 1024,
    timeLimitMs: options.timeLimitMs ?? 1000,
    onLog,
  });
  try {
    const loaded = sandbox.load(indexCode + metricsTrailer(marker), { setup: requireShim() });
    return {
      capabilities: {
        methods: loaded.methods.filter((method) => !SCHEDULED_TASKS.includes(method)),
        jobs: loaded.jobs,
        scheduled_tasks: loaded.methods.filter((method) => SCHEDULED_TASKS.includes(method)),
      },
      metrics: readMetrics(metricsJson),
    };
  } catch (error) {
    if (error instanceof AppInstallError) throw error;
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
