import {
  SandboxAppError,
  SandboxTimeoutError,
  type PluginMethodName,
  type PooledSandbox,
  type SandboxCapabilities,
  type SandboxFetch,
  type SandboxHostFunction,
  type SandboxJson,
  type SandboxPool,
} from '@hogbase/apps-sandbox';
import type { GeoIp } from './geoip.client';
import type { PluginCache } from './plugin-cache.store';
import type { PluginLogSource, PluginLogType, PluginLogWriter } from './plugin-log.repository';
import type { PluginStorage } from './plugin-storage.repository';
import { PLUGIN_API_SETUP_SOURCE } from './plugin-api-guest.constants';

/** Its config's secrets opened. */
export interface AppDefinition {
  pluginConfigId: number;
  pluginId: number;
  teamId: number;
  pluginName: string;
  code: string;
  config: Record<string, SandboxJson>;
  attachments: Record<string, { content_type: string; file_name: string; contents: string }>;
  /** name → sum | max | min, as the installer recorded it. */
  metrics: Record<string, string>;
  /** A running instance of another version is replaced. */
  version: string;
}

/** `posthog.capture`: it enters the pipeline like an SDK's event. */
export interface AppCapturedEvent {
  teamId: number;
  event: string;
  distinctId: string;
  properties: Record<string, unknown>;
}

export interface AppTimeoutPolicy {
  /** Doubled at each timeout in a row. */
  backoffMs: number;
  /** Timeouts in a row. */
  disableAfter: number;
}

export interface AppServices {
  storage: PluginStorage;
  cache: PluginCache;
  log: PluginLogWriter;
  fetch: SandboxFetch;
  sandboxes: Pick<SandboxPool, 'createSandbox'>;
  memoryLimitBytes: number;
  timeLimitMs: number;
  callCpuMs: number;
  timeouts: AppTimeoutPolicy;
  /** Omitted: the app is only refused in this process. */
  disable?: (app: AppDefinition, reason: string) => Promise<void>;
  /** Omitted: the app's capture rejects. */
  capture?: (event: AppCapturedEvent) => Promise<void>;
  /** Omitted: jobs reject. */
  enqueueJob?: (app: AppDefinition, job: string, payload: SandboxJson, runAt: Date) => Promise<void>;
  /** Omitted: every lookup answers null. */
  geoip?: GeoIp;
  /** Omitted: updates are dropped. */
  updateMetric?: (app: AppDefinition, name: string, operation: string, value: number) => void;
}

/** The app is backing off after timeouts, or was disabled for them. */
export class AppSkippedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppSkippedError';
  }
}

const CONSOLE_TYPES: Record<string, PluginLogType> = {
  log: 'LOG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  debug: 'DEBUG',
};

const MAX_BACKOFF_MS = 60 * 60 * 1_000;

/**
 * One app of one project with PostHog's plugin API, `setupPlugin` run. A call that broke the sandbox
 * makes the next load a fresh one. Timeouts make the app back off, then disable it (README.md).
 */
export class AppInstance {
  private sandbox: PooledSandbox | undefined;
  private starting: Promise<PooledSandbox> | undefined;
  private loadedCapabilities: SandboxCapabilities | undefined;
  private timeoutsInARow = 0;
  /** Calls failing together with it count as one timeout. */
  private lastTimeout: object | undefined;
  private backoffUntil = 0;
  private skippedCalls = 0;
  private disabledFor: string | undefined;

  private constructor(
    readonly app: AppDefinition,
    private readonly services: AppServices,
  ) {}

  /** Throws the load's or setup's error (logged to the config). */
  static async start(app: AppDefinition, services: AppServices): Promise<AppInstance> {
    const instance = new AppInstance(app, services);
    await instance.ready();
    return instance;
  }

  async exports(): Promise<{ methods: PluginMethodName[]; jobs: string[] }> {
    return this.loadedCapabilities ?? (await this.ready()).capabilities;
  }

  async has(method: PluginMethodName): Promise<boolean> {
    return (await this.exports()).methods.includes(method);
  }

  /** Every call is refused. */
  get disabled(): boolean {
    return this.disabledFor !== undefined;
  }

  /** Rejects with {@link AppSkippedError} while the app backs off or once it is disabled. */
  async call(
    method: PluginMethodName | `jobs.${string}`,
    ...args: SandboxJson[]
  ): Promise<SandboxJson | undefined> {
    if (this.disabledFor) throw new AppSkippedError(`the app was disabled: ${this.disabledFor}`);
    if (Date.now() < this.backoffUntil) {
      this.skippedCalls += 1;
      throw new AppSkippedError(
        `${method} skipped: the app is backing off until ${new Date(this.backoffUntil).toISOString()} after ${this.timeoutsInARow} timeouts in a row`,
      );
    }
    this.reportSkipped();
    let sandbox: PooledSandbox | undefined;
    try {
      sandbox = await this.ready();
      const result = await sandbox.call(method, ...args);
      this.timeoutsInARow = 0;
      return result;
    } catch (error) {
      // A timeout while the app loads again counts too: one cut off at every start must back off.
      if (error instanceof SandboxTimeoutError) {
        this.timedOut(sandbox ?? error, sandbox ? method : `the app's start before ${method}`, error);
      } else if (sandbox && error instanceof SandboxAppError) {
        this.timeoutsInARow = 0;
      }
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.reportSkipped();
    const sandbox = await this.starting?.catch(() => undefined);
    this.starting = undefined;
    this.sandbox = undefined;
    if (!sandbox) return;
    if (!sandbox.broken && !this.disabledFor && sandbox.capabilities.methods.includes('teardownPlugin')) {
      await sandbox.call('teardownPlugin').catch((error: unknown) => {
        this.logLine('ERROR', `teardownPlugin failed: ${messageOf(error)}`, 'PLUGIN');
      });
    }
    sandbox.dispose();
  }

  /** What the host did for the app. */
  logLine(type: PluginLogType, message: string, source: PluginLogSource = 'SYSTEM'): void {
    this.services.log.log({
      pluginConfigId: this.app.pluginConfigId,
      pluginId: this.app.pluginId,
      teamId: this.app.teamId,
      source,
      type,
      message,
    });
  }

  private timedOut(what: object, method: string, error: SandboxTimeoutError): void {
    if (this.lastTimeout === what) return;
    this.lastTimeout = what;
    this.timeoutsInARow += 1;
    const { backoffMs, disableAfter } = this.services.timeouts;
    if (this.timeoutsInARow >= disableAfter) {
      this.disable(`${this.timeoutsInARow} calls in a row timed out (the last: ${error.message})`);
      return;
    }
    const pauseMs = Math.min(backoffMs * 2 ** (this.timeoutsInARow - 1), MAX_BACKOFF_MS);
    this.backoffUntil = Date.now() + pauseMs;
    this.logLine(
      'WARN',
      `${method} timed out (${error.message}), ${this.timeoutsInARow} in a row: the app's calls are skipped for ${pauseMs / 1_000} s; after ${disableAfter} in a row it is disabled`,
    );
  }

  private disable(reason: string): void {
    this.disabledFor = reason;
    this.reportSkipped();
    this.logLine('ERROR', `The app was disabled: ${reason}. Fix it, then enable it again.`);
    const sandbox = this.sandbox;
    this.sandbox = undefined;
    this.starting = undefined;
    sandbox?.dispose();
    this.services.disable?.(this.app, reason).catch((failure: unknown) => {
      this.logLine('ERROR', `The app could not be disabled in the database: ${messageOf(failure)}`);
    });
  }

  /** Once the back-off is over (or the app stops). */
  private reportSkipped(): void {
    if (this.skippedCalls === 0) return;
    this.logLine('WARN', `${this.skippedCalls} calls skipped while the app backed off after timeouts`);
    this.skippedCalls = 0;
  }

  private ready(): Promise<PooledSandbox> {
    if (this.sandbox && !this.sandbox.broken) return Promise.resolve(this.sandbox);
    if (this.sandbox?.broken) {
      this.sandbox.dispose();
      this.sandbox = undefined;
      this.starting = undefined;
    }
    this.starting ??= this.load().then(
      (sandbox) => {
        this.sandbox = sandbox;
        return sandbox;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw error;
      },
    );
    return this.starting;
  }

  private async load(): Promise<PooledSandbox> {
    const { app, services } = this;
    const sandbox = await services.sandboxes.createSandbox({
      memoryLimitBytes: services.memoryLimitBytes,
      timeLimitMs: services.timeLimitMs,
      cpuLimitMs: services.callCpuMs,
      fetch: services.fetch,
      hostFunctions: this.hostFunctions(),
      onLog: (line) => this.logLine(CONSOLE_TYPES[line.level] ?? 'LOG', line.message, 'CONSOLE'),
    });
    try {
      this.loadedCapabilities = await sandbox.load(app.code, {
        globals: {
          __hogbasePluginContext: { config: app.config, attachments: app.attachments, metrics: app.metrics },
        },
        setup: PLUGIN_API_SETUP_SOURCE,
      });
      if (sandbox.capabilities.methods.includes('setupPlugin')) await sandbox.call('setupPlugin');
      return sandbox;
    } catch (error) {
      sandbox.dispose();
      this.logLine('ERROR', `the app could not start: ${messageOf(error)}`);
      throw error;
    }
  }

  private hostFunctions(): Record<string, SandboxHostFunction> {
    const { app, services } = this;
    const id = app.pluginConfigId;
    const namespace = `${app.pluginId}:${app.teamId}`;
    const { cache, storage } = services;
    const text = (value: SandboxJson) => (typeof value === 'string' ? value : JSON.stringify(value));
    /** The cache answers at once; the bridge wants a promise. */
    const now =
      <T extends SandboxJson | undefined>(work: (...args: SandboxJson[]) => T) =>
      (...args: SandboxJson[]) =>
        Promise.resolve().then(() => work(...args));
    const integer = (value: SandboxJson) => Math.trunc(Number(value)) || 0;
    return {
      'storage.get': async (key) => (await storage.get(id, text(key))) as SandboxJson,
      'storage.set': async (key, value) => storage.set(id, text(key), value),
      'storage.del': async (key) => storage.del(id, text(key)),
      'cursor.init': async (key, initial) => storage.initCursor(id, text(key), Number(initial) || 0),
      'cursor.increment': async (key, by) => storage.incrementCursor(id, text(key), Number(by) || 0),
      'cache.set': now((key, value, ttl) => {
        cache.set(namespace, text(key), text(value), ttl === null ? null : Number(ttl));
        return 'OK';
      }),
      'cache.get': now((key) => cache.get(namespace, text(key))),
      'cache.incr': now((key) => cache.incr(namespace, text(key))),
      'cache.expire': now((key, ttl) => cache.expire(namespace, text(key), Number(ttl))),
      'cache.lpush': now((key, elements) =>
        cache.lpush(namespace, text(key), Array.isArray(elements) ? elements.map(text) : [text(elements)]),
      ),
      'cache.lrange': now((key, start, end) =>
        cache.lrange(namespace, text(key), integer(start), integer(end)),
      ),
      'cache.llen': now((key) => cache.llen(namespace, text(key))),
      'cache.lpop': now((key, count) => cache.lpop(namespace, text(key), integer(count))),
      'cache.lrem': now((key, count, element) =>
        cache.lrem(namespace, text(key), integer(count), text(element)),
      ),
      'jobs.enqueue': async (name, payload, runAt) => {
        if (!services.enqueueJob) throw new Error('jobs cannot be scheduled from here');
        await services.enqueueJob(app, text(name), payload, new Date(Number(runAt)));
      },
      'metrics.update': now((name, operation, value) => {
        services.updateMetric?.(app, text(name), text(operation), Number(value));
        return undefined;
      }),
      'geoip.locate': async (ip) => (services.geoip ? services.geoip.locate(text(ip)) : null),
      'posthog.capture': async (event, properties) => {
        if (!services.capture) throw new Error('posthog.capture is not available here');
        const props =
          properties !== null && typeof properties === 'object' && !Array.isArray(properties)
            ? properties
            : {};
        const distinctId =
          typeof props.distinct_id === 'string' || typeof props.distinct_id === 'number'
            ? String(props.distinct_id)
            : app.pluginName;
        await services.capture({
          teamId: app.teamId,
          event: text(event),
          distinctId,
          properties: { ...props, $lib: 'posthog-plugin-server' },
        });
      },
      'posthog.api': () =>
        Promise.reject(
          new Error('posthog.api is not available on this server: use fetch with a personal API key'),
        ),
    };
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
