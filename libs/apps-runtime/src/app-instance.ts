import {
  createSandbox,
  type PluginMethodName,
  type Sandbox,
  type SandboxFetch,
  type SandboxHostFunction,
  type SandboxJson,
} from '@hogbase/apps-sandbox';
import type { GeoIp } from './geoip';
import type { PluginCache } from './plugin-cache';
import type { PluginLogSource, PluginLogType, PluginLogWriter } from './plugin-log';
import type { PluginStorage } from './plugin-storage';
import { PLUGIN_API_SETUP_SOURCE } from './plugin-api.guest';

/** An app as one project enabled it: its code and its config, secrets opened. */
export interface AppDefinition {
  pluginConfigId: number;
  pluginId: number;
  teamId: number;
  pluginName: string;
  /** The app's bundled CommonJS code. */
  code: string;
  config: Record<string, SandboxJson>;
  attachments: Record<string, { content_type: string; file_name: string; contents: string }>;
  /** The app's `metrics` export as the installer recorded it: name → sum | max | min. */
  metrics: Record<string, string>;
  /** Changes whenever the app's code or config does: a running instance of another version is replaced. */
  version: string;
}

/** An event an app captures with `posthog.capture`: it enters the pipeline like an SDK's. */
export interface AppCapturedEvent {
  teamId: number;
  event: string;
  distinctId: string;
  properties: Record<string, unknown>;
}

/** What the host gives every app instance: storage, cache, logs, the network, and the pipeline. */
export interface AppServices {
  storage: PluginStorage;
  cache: PluginCache;
  log: PluginLogWriter;
  fetch: SandboxFetch;
  memoryLimitBytes: number;
  timeLimitMs: number;
  /** `posthog.capture`. Omitted: the app's capture rejects (the service has no way into the queue). */
  capture?: (event: AppCapturedEvent) => Promise<void>;
  /** `meta.jobs.<name>(payload).runAt(…)`. Omitted: jobs reject. */
  enqueueJob?: (app: AppDefinition, job: string, payload: SandboxJson, runAt: Date) => Promise<void>;
  /** `meta.geoip`. Omitted: every lookup answers null (no GeoIP database configured). */
  geoip?: GeoIp;
  /** `meta.metrics`. Omitted: updates are dropped. */
  updateMetric?: (app: AppDefinition, name: string, operation: string, value: number) => void;
}

const CONSOLE_TYPES: Record<string, PluginLogType> = {
  log: 'LOG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  debug: 'DEBUG',
};

/**
 * One app of one project, loaded in its own sandbox with PostHog's plugin API, `setupPlugin` run.
 * When a call breaks the sandbox (time or memory), the next call loads a fresh one; an app's own
 * error leaves it as it is.
 */
export class AppInstance {
  private sandbox: Sandbox | undefined;
  private starting: Promise<Sandbox> | undefined;

  private constructor(
    readonly app: AppDefinition,
    private readonly services: AppServices,
  ) {}

  /** Loads the app and runs its `setupPlugin`; throws the load's or setup's error (logged to the config). */
  static async start(app: AppDefinition, services: AppServices): Promise<AppInstance> {
    const instance = new AppInstance(app, services);
    await instance.ready();
    return instance;
  }

  /** The exported methods and jobs, as the loaded code shows them. */
  async exports(): Promise<{ methods: PluginMethodName[]; jobs: string[] }> {
    return (await this.ready()).capabilities;
  }

  async has(method: PluginMethodName): Promise<boolean> {
    return (await this.exports()).methods.includes(method);
  }

  /** Calls a method (or `jobs.<name>`) with JSON arguments; `meta` is appended by the plugin API. */
  async call(
    method: PluginMethodName | `jobs.${string}`,
    ...args: SandboxJson[]
  ): Promise<SandboxJson | undefined> {
    const sandbox = await this.ready();
    return sandbox.call(method, ...args);
  }

  /** Runs `teardownPlugin` (errors logged) and frees the sandbox. */
  async stop(): Promise<void> {
    const sandbox = await this.starting?.catch(() => undefined);
    this.starting = undefined;
    this.sandbox = undefined;
    if (!sandbox) return;
    if (!sandbox.broken && sandbox.capabilities.methods.includes('teardownPlugin')) {
      await sandbox.call('teardownPlugin').catch((error: unknown) => {
        this.logLine('ERROR', `teardownPlugin failed: ${messageOf(error)}`, 'PLUGIN');
      });
    }
    sandbox.dispose();
  }

  /** Writes a line to the config's log (what the host did for the app). */
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

  private ready(): Promise<Sandbox> {
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

  private async load(): Promise<Sandbox> {
    const { app, services } = this;
    const sandbox = await createSandbox({
      memoryLimitBytes: services.memoryLimitBytes,
      timeLimitMs: services.timeLimitMs,
      fetch: services.fetch,
      hostFunctions: this.hostFunctions(),
      onLog: (line) => this.logLine(CONSOLE_TYPES[line.level] ?? 'LOG', line.message, 'CONSOLE'),
    });
    try {
      sandbox.load(app.code, {
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
    /** The in-process cache answers at once; the bridge still wants a promise. */
    const now =
      <T extends SandboxJson | undefined>(work: (...args: SandboxJson[]) => T) =>
      (...args: SandboxJson[]) =>
        Promise.resolve(work(...args));
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
