import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
} from 'quickjs-emscripten';
import { SandboxAppError, SandboxError, SandboxMemoryError, SandboxTimeoutError } from './sandbox.errors';
import {
  DESCRIBE_SOURCE,
  HIDE_HOST_SOURCE,
  PRELUDE_SOURCE,
  TRAMPOLINE_SOURCE,
} from './sandbox-prelude.constants';

/** What PostHog's plugin server looks for (jobs are listed separately). */
export const PLUGIN_METHOD_NAMES = [
  'setupPlugin',
  'teardownPlugin',
  'composeWebhook',
  'onEvent',
  'processEvent',
  'runEveryMinute',
  'runEveryHour',
  'runEveryDay',
  'getSettings',
] as const;

export type PluginMethodName = (typeof PLUGIN_METHOD_NAMES)[number];

/** QuickJS's default stack is deeper than the host's wasm stack: guest recursion must fail inside the guest. */
const MAX_STACK_SIZE_BYTES = 256 * 1024;

export interface SandboxFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  [option: string]: unknown;
}

export interface SandboxFetchResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type SandboxFetch = (url: string, init: SandboxFetchInit) => Promise<SandboxFetchResponse>;

export type SandboxLogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

export interface SandboxLogLine {
  level: SandboxLogLevel;
  /** Strings as they are, other values as JSON, joined by spaces. */
  message: string;
}

/** Called from a `setup` source as `__hogbaseHost.call(name, ...args)`. */
export type SandboxHostFunction = (...args: SandboxJson[]) => Promise<SandboxJson | undefined | void>;

export interface SandboxLoadOptions {
  globals?: Record<string, SandboxJson>;
  /**
   * Run before the app with `globalThis.__hogbaseHost`; it may set `globalThis.__hogbaseCallContext`,
   * appended to every call's arguments (the plugin API's `meta`). Both are removed before the app runs.
   */
  setup?: string;
}

export interface SandboxOptions {
  memoryLimitBytes: number;
  /** Per call, wall clock, including the host work it awaits such as `fetch`. */
  timeLimitMs: number;
  /** Per call (and for load): the guest's own execution, summed over its stretches. Default `timeLimitMs`. */
  cpuLimitMs?: number;
  /** Omitted: the app has no `fetch` at all. */
  fetch?: SandboxFetch;
  onLog?: (line: SandboxLogLine) => void;
  hostFunctions?: Record<string, SandboxHostFunction>;
  /** The app kept running after the interrupt cut it off: only ending its thread stops it. */
  onRunaway?: (message: string) => void;
  /** Longest JSON text taken from the guest at once (four times this in flight); past it the call rejects. */
  maxPayloadLength?: number;
}

const DEFAULT_MAX_PAYLOAD_LENGTH = 8 * 1024 * 1024;
const MAX_LOG_LINE_LENGTH = 64 * 1024;

export interface SandboxCapabilities {
  methods: PluginMethodName[];
  jobs: string[];
}

export type SandboxJson =
  null | boolean | number | string | SandboxJson[] | { [key: string]: SandboxJson | undefined };

interface PendingCall {
  id: number;
  method: string;
  cpuUsedMs: number;
  resolve: (result: SandboxJson | undefined) => void;
  reject: (error: SandboxError) => void;
  timer: NodeJS.Timeout;
}

interface GuestHandles {
  describe: QuickJSHandle;
  invoke: QuickJSHandle;
  resolve: QuickJSHandle;
  capabilities: QuickJSHandle;
}

const LOG_LEVELS: ReadonlySet<string> = new Set<SandboxLogLevel>(['log', 'info', 'warn', 'error', 'debug']);

/**
 * SECURITY: values cross only as JSON text made by guest code that ran before the app, and the host
 * trusts none of it: what it cannot read rejects that call (or breaks this sandbox), never the host.
 */
export class Sandbox {
  private plugin: QuickJSHandle | undefined;
  private guest: Partial<GuestHandles> = {};
  private loadedCapabilities: SandboxCapabilities | undefined;
  private readonly inFlight = new Map<number, PendingCall>();
  private nextCallId = 1;
  private brokenBy: SandboxError | undefined;
  private disposed = false;
  /** Set by the interrupt handler for the rest of that run: it ends as a time error whatever the guest did. */
  private cutOff: string | undefined;
  private openHostCalls = 0;
  private openHostPayload = 0;
  private readonly cpuLimitMs: number;
  private readonly maxPayloadLength: number;

  /** @internal use {@link createSandbox} */
  constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly context: QuickJSContext,
    private readonly options: SandboxOptions,
  ) {
    this.cpuLimitMs = options.cpuLimitMs ?? options.timeLimitMs;
    this.maxPayloadLength = options.maxPayloadLength ?? DEFAULT_MAX_PAYLOAD_LENGTH;
  }

  get broken(): boolean {
    return this.brokenBy !== undefined;
  }

  get capabilities(): SandboxCapabilities {
    if (!this.loadedCapabilities) throw new SandboxError('the sandbox has no app loaded');
    return this.loadedCapabilities;
  }

  /** After a failed load, dispose the sandbox. */
  load(code: string, options: SandboxLoadOptions = {}): SandboxCapabilities {
    this.assertUsable();
    if (this.plugin) throw new SandboxError('the sandbox already has an app loaded');
    const context = this.context;
    this.runGuest('loading the app', [], () => {
      this.guest.describe = this.evaluate(DESCRIBE_SOURCE, 'describe.js');
      this.installHostBridge();
      this.evaluate(
        `(function (globals) { Object.assign(globalThis, JSON.parse(globals)); })`,
        'globals.js',
        (setGlobals) =>
          this.callGuest(setGlobals, [context.newString(JSON.stringify(options.globals ?? {}))]),
      ).dispose();
      this.evaluate(PRELUDE_SOURCE, 'prelude.js').dispose();
      if (options.setup) this.evaluate(options.setup, 'setup.js').dispose();
      const trampoline = this.evaluate(TRAMPOLINE_SOURCE, 'trampoline.js', (make) =>
        this.callGuest(make, [
          context.getProp(context.global, '__hogbaseHost'),
          (this.guest.describe as QuickJSHandle).dup(),
          this.parseJson(JSON.stringify(PLUGIN_METHOD_NAMES)),
        ]),
      );
      this.guest.invoke = context.getProp(trampoline, 'invoke');
      this.guest.resolve = context.getProp(trampoline, 'resolve');
      this.guest.capabilities = context.getProp(trampoline, 'capabilities');
      trampoline.dispose();
      this.evaluate(HIDE_HOST_SOURCE, 'hide-host.js').dispose();
      this.evaluate(code, 'app.js').dispose();
      this.plugin = this.callGuest(this.guest.resolve, []);
      const listed = this.callGuest(this.guest.capabilities, [this.plugin.dup()]);
      const json = this.stringOf(listed);
      listed.dispose();
      this.loadedCapabilities = readCapabilities(json);
    });
    return this.capabilities;
  }

  call(
    method: PluginMethodName | `jobs.${string}`,
    ...args: SandboxJson[]
  ): Promise<SandboxJson | undefined> {
    return new Promise((resolve, reject) => {
      this.assertUsable();
      const capabilities = this.capabilities;
      const isJob = method.startsWith('jobs.');
      const name = isJob ? method.slice('jobs.'.length) : method;
      const exported = isJob
        ? capabilities.jobs.includes(name)
        : (capabilities.methods as string[]).includes(name);
      if (!exported) throw new SandboxError(`the app does not export ${method}`);
      const argsJson = JSON.stringify(args);

      const pending: PendingCall = {
        id: this.nextCallId++,
        method,
        cpuUsedMs: 0,
        resolve,
        reject,
        timer: setTimeout(
          () => this.breakWith(new SandboxTimeoutError(`${method} exceeded ${this.options.timeLimitMs} ms`)),
          this.options.timeLimitMs,
        ),
      };
      this.inFlight.set(pending.id, pending);
      const context = this.context;
      try {
        this.runGuest(method, [pending], () => {
          this.callGuest(this.guest.invoke as QuickJSHandle, [
            (this.plugin as QuickJSHandle).dup(),
            context.newNumber(pending.id),
            context.newNumber(isJob ? 1 : 0),
            context.newString(name),
            context.newString(argsJson),
          ]).dispose();
        });
      } catch (error) {
        this.settle(pending, () => reject(error instanceof SandboxError ? error : this.hostFailure(error)));
        return;
      }
      this.drainJobs();
    });
  }

  dispose(): void {
    if (this.disposed) return;
    // TRICKY: QuickJS aborts its whole wasm instance when a runtime is freed with guest objects
    // alive (a call cut off, a fetch still out): such a sandbox is left whole to the garbage collector.
    const freeable = !this.broken && this.inFlight.size === 0 && this.openHostCalls === 0;
    this.failInFlight(new SandboxError('the sandbox was disposed'));
    this.disposed = true;
    if (!freeable) return;
    try {
      this.plugin?.dispose();
      for (const handle of Object.values(this.guest)) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
    } catch {}
  }

  private installHostBridge(): void {
    const context = this.context;
    const bridge = context.newObject();
    const log = context.newFunction('log', (levelHandle, messageHandle) => {
      const level = this.stringOf(levelHandle);
      const length = this.lengthOf(messageHandle);
      const message =
        length > MAX_LOG_LINE_LENGTH
          ? `[a console line of ${length} characters, longer than ${MAX_LOG_LINE_LENGTH}, was dropped]`
          : this.stringOf(messageHandle);
      if (level === undefined || message === undefined || !LOG_LEVELS.has(level)) return;
      try {
        this.options.onLog?.({ level: level as SandboxLogLevel, message });
      } catch {
        // A failing log sink must not turn into an app error.
      }
    });
    context.setProp(bridge, 'log', log);
    log.dispose();
    const hostFetch = this.options.fetch;
    if (hostFetch) {
      const fetchFunction = context.newFunction('fetch', (urlHandle, initHandle) => {
        const payload = this.takePayload([urlHandle, initHandle], 'fetch');
        const url = this.stringOf(urlHandle);
        const init = parseObject(this.stringOf(initHandle));
        if (url === undefined || init === undefined)
          throw new Error('fetch takes a URL and an options object');
        return this.bridgePromise(payload, async () => {
          const answer = await hostFetch(url, init);
          const headers = Object.fromEntries(
            Object.entries(answer.headers).map(([name, value]) => [name.toLowerCase(), value]),
          );
          return JSON.stringify({ status: answer.status, headers, body: answer.body });
        });
      });
      context.setProp(bridge, 'fetch', fetchFunction);
      fetchFunction.dispose();
    }
    const hostFunctions = this.options.hostFunctions ?? {};
    const callFunction = context.newFunction('call', (nameHandle, argsHandle) => {
      const name = this.stringOf(nameHandle);
      const payload = this.takePayload([nameHandle, argsHandle], name ?? 'a host function');
      const args = parseJsonText(this.stringOf(argsHandle));
      if (name === undefined || !Array.isArray(args)) throw new Error('call takes a name and its arguments');
      return this.bridgePromise(payload, async () => {
        const hostFunction = Object.hasOwn(hostFunctions, name) ? hostFunctions[name] : undefined;
        if (!hostFunction) throw new Error(`the host has no function ${name}`);
        const result = await hostFunction(...(args as SandboxJson[]));
        return result === undefined ? 'undefined' : JSON.stringify(result);
      });
    });
    context.setProp(bridge, 'call', callFunction);
    callFunction.dispose();
    const settleFunction = context.newFunction('settle', (idHandle, okHandle, jsonHandle) => {
      this.settleFromGuest(idHandle, okHandle, jsonHandle);
    });
    context.setProp(bridge, 'settle', settleFunction);
    settleFunction.dispose();
    context.setProp(context.global, '__hogbaseHost', bridge);
    bridge.dispose();
  }

  private settleFromGuest(idHandle: QuickJSHandle, okHandle: QuickJSHandle, jsonHandle: QuickJSHandle): void {
    const context = this.context;
    if (context.typeof(idHandle) !== 'number') return;
    const pending = this.inFlight.get(context.getNumber(idHandle));
    if (!pending) return;
    // What a call reports after the guest was cut off is dropped (runGuest).
    if (this.wasCutOff) return;
    const ok = context.typeof(okHandle) === 'number' && context.getNumber(okHandle) === 1;
    const length = this.lengthOf(jsonHandle);
    if (length > this.maxPayloadLength) {
      const what = ok ? 'result' : 'error';
      this.settle(pending, () =>
        pending.reject(
          new SandboxAppError(
            `${pending.method}'s ${what} has ${length} characters as JSON, more than the ${this.maxPayloadLength} the host takes`,
            undefined,
            undefined,
          ),
        ),
      );
      return;
    }
    const json = this.stringOf(jsonHandle);
    if (ok) {
      let value: SandboxJson | undefined;
      try {
        value = json === undefined ? undefined : (JSON.parse(json) as SandboxJson);
      } catch {
        this.settle(pending, () =>
          pending.reject(
            new SandboxAppError(`${pending.method} returned a value that is not JSON`, undefined, undefined),
          ),
        );
        return;
      }
      this.settle(pending, () => pending.resolve(value));
      return;
    }
    const error = this.errorFromDescription(json);
    if (error instanceof SandboxAppError) this.settle(pending, () => pending.reject(error));
    else this.breakWith(error);
  }

  private bridgePromise(payload: number, work: () => Promise<string>): QuickJSHandle {
    const context = this.context;
    const deferred = context.newPromise();
    this.openHostCalls += 1;
    this.openHostPayload += payload;
    const answer = (settleGuest: () => void): void => {
      this.openHostCalls -= 1;
      this.openHostPayload -= payload;
      if (this.disposed || !deferred.alive) return;
      try {
        settleGuest();
      } catch (error) {
        this.breakWith(this.hostFailure(error));
        return;
      }
      this.drainJobs();
    };
    Promise.resolve()
      .then(work)
      .then(
        (text) =>
          answer(() => {
            const value = context.newString(text);
            deferred.resolve(value);
            value.dispose();
          }),
        (error: unknown) =>
          answer(() => {
            const guestError = context.newError(error instanceof Error ? error.message : String(error));
            deferred.reject(guestError);
            guestError.dispose();
          }),
      )
      .catch((error: unknown) => this.breakWith(this.hostFailure(error)));
    return deferred.handle;
  }

  private drainJobs(): void {
    if (this.broken || this.disposed || !this.runtime.hasPendingJob()) return;
    const calls = [...this.inFlight.values()];
    try {
      this.runGuest(calls.length === 1 ? calls[0].method : 'the app', calls, () => {
        // One job at a time: QuickJS would go on to the next job after one was cut off.
        while (!this.broken && !this.wasCutOff && this.runtime.hasPendingJob()) {
          const executed = this.runtime.executePendingJobs(1);
          if (!executed.error) continue;
          if (this.wasCutOff) {
            executed.error.dispose();
            return;
          }
          const error = this.classify(executed.error);
          if (executed.error.alive) executed.error.dispose();
          // An app error escaping a job belongs to no call (calls see theirs through the trampoline).
          if (!(error instanceof SandboxAppError)) throw error;
          this.options.onLog?.({ level: 'error', message: `unhandled: ${error.message}` });
        }
      });
    } catch (error) {
      this.breakWith(error instanceof SandboxError ? error : this.hostFailure(error));
    }
  }

  /**
   * SECURITY: a stretch the interrupt handler cut off is a time error, decided from the handler having
   * fired, never from the guest: QuickJS's "uncatchable" interrupt becomes a rejection an app may catch.
   * A handler polled again means the guest went on past it: `onRunaway`.
   */
  private runGuest<T>(label: string, calls: PendingCall[], enter: () => T): T {
    const started = Date.now();
    const spent = calls.reduce((most, call) => Math.max(most, call.cpuUsedMs), 0);
    const deadline = started + this.cpuLimitMs - spent;
    const message = `${label} used more than ${this.cpuLimitMs} ms of CPU`;
    let runawayReported = false;
    this.cutOff = undefined;
    this.runtime.setInterruptHandler(() => {
      if (this.cutOff === undefined) {
        if (Date.now() <= deadline) return false;
        this.cutOff = message;
        return true;
      }
      if (!runawayReported) {
        runawayReported = true;
        try {
          this.options.onRunaway?.(message);
        } catch {
          // The guest is interrupted either way.
        }
      }
      return true;
    });
    let failure: { error: unknown } | undefined;
    let value: T | undefined;
    try {
      value = enter();
    } catch (error) {
      failure = { error };
    } finally {
      this.runtime.removeInterruptHandler();
      const elapsed = Date.now() - started;
      for (const call of calls) call.cpuUsedMs += elapsed;
    }
    if (this.cutOff !== undefined) {
      const timeout = new SandboxTimeoutError(this.cutOff);
      this.breakWith(timeout);
      throw timeout;
    }
    if (failure) {
      const sandboxError =
        failure.error instanceof SandboxError ? failure.error : this.hostFailure(failure.error);
      if (!(sandboxError instanceof SandboxAppError)) this.breakWith(sandboxError);
      throw sandboxError;
    }
    return value as T;
  }

  private get wasCutOff(): boolean {
    return this.cutOff !== undefined;
  }

  private evaluate(source: string, filename: string): QuickJSHandle;
  private evaluate(
    source: string,
    filename: string,
    use: (value: QuickJSHandle) => QuickJSHandle,
  ): QuickJSHandle;
  private evaluate(
    source: string,
    filename: string,
    use?: (value: QuickJSHandle) => QuickJSHandle,
  ): QuickJSHandle {
    // Always a script: with no options QuickJS guesses and would run `export` code as a module.
    const result = this.context.evalCode(source, filename, { type: 'global' });
    if (result.error) {
      const error = this.classify(result.error);
      if (result.error.alive) result.error.dispose();
      throw error;
    }
    if (!use) return result.value;
    try {
      return use(result.value);
    } finally {
      result.value.dispose();
    }
  }

  private callGuest(func: QuickJSHandle, args: QuickJSHandle[]): QuickJSHandle {
    try {
      const result = this.context.callFunction(func, this.context.undefined, ...args);
      if (result.error) {
        const error = this.classify(result.error);
        if (result.error.alive) result.error.dispose();
        throw error;
      }
      return result.value;
    } finally {
      for (const arg of args) arg.dispose();
    }
  }

  private parseJson(json: string): QuickJSHandle {
    const parsed = this.context.evalCode(`(${json})`, 'value.js', { type: 'global' });
    return parsed.unwrap();
  }

  /** Refused inside the app past the payload limit: what the host holds for a sandbox is bounded. */
  private takePayload(handles: QuickJSHandle[], what: string): number {
    const length = handles.reduce((sum, handle) => sum + this.lengthOf(handle), 0);
    if (length > this.maxPayloadLength) {
      throw new Error(
        `${what} was given ${length} characters, more than the ${this.maxPayloadLength} the host takes`,
      );
    }
    if (this.openHostPayload + length > 4 * this.maxPayloadLength) {
      throw new Error(
        `${what} refused: the host calls in flight already carry ${this.openHostPayload} characters`,
      );
    }
    return length;
  }

  private lengthOf(handle: QuickJSHandle): number {
    if (this.context.typeof(handle) !== 'string') return 0;
    const length = this.context.getProp(handle, 'length');
    const value = this.context.getNumber(length);
    length.dispose();
    return value;
  }

  /** Undefined for any other value: converting one would run guest code. */
  private stringOf(handle: QuickJSHandle): string | undefined {
    return this.context.typeof(handle) === 'string' ? this.context.getString(handle) : undefined;
  }

  private classify(errorHandle: QuickJSHandle): SandboxError {
    const describe = this.guest.describe;
    if (!describe) return new SandboxError('the sandbox failed to start');
    const described = this.context.callFunction(describe, this.context.undefined, errorHandle);
    let json: string | undefined;
    if (described.error) {
      described.error.dispose();
    } else {
      json = this.stringOf(described.value);
      described.value.dispose();
    }
    return this.errorFromDescription(json);
  }

  private errorFromDescription(json: string | undefined): SandboxError {
    const description = parseObject(json);
    const kind = description?.kind;
    // TRICKY: when QuickJS runs out of memory while already out of memory it throws `null`, and
    // string doubling ends at its length cap ("string too long") rather than at the heap limit.
    if (kind === 'null') return new SandboxMemoryError('the app exceeded its memory limit');
    const message = typeof description?.message === 'string' ? description.message : undefined;
    if (kind === 'error' && message !== undefined) {
      const name = typeof description?.name === 'string' ? description.name : undefined;
      const stack =
        typeof description?.stack === 'string' && description.stack !== '' ? description.stack : undefined;
      if (name === 'InternalError' && /^(out of memory|string too long)$/.test(message)) {
        return new SandboxMemoryError(`the app exceeded its memory limit (${message})`);
      }
      if (name === 'RangeError' && message === 'invalid string length') {
        return new SandboxMemoryError(`the app exceeded its memory limit (${message})`);
      }
      return new SandboxAppError(message, name, stack);
    }
    if (kind === 'value' && message !== undefined) return new SandboxAppError(message, undefined, undefined);
    return new SandboxAppError('the app threw a value that could not be read', undefined, undefined);
  }

  private hostFailure(error: unknown): SandboxError {
    const message = error instanceof Error ? error.message : String(error);
    return /memory/i.test(message)
      ? new SandboxMemoryError(`the sandbox failed: ${message}`)
      : new SandboxError(`the sandbox failed: ${message}`);
  }

  private settle(pending: PendingCall, outcome: () => void): void {
    if (!this.inFlight.delete(pending.id)) return;
    clearTimeout(pending.timer);
    outcome();
  }

  private breakWith(error: SandboxError): void {
    this.brokenBy ??= error;
    this.failInFlight(error);
  }

  private failInFlight(error: SandboxError): void {
    for (const pending of [...this.inFlight.values()]) this.settle(pending, () => pending.reject(error));
  }

  private assertUsable(): void {
    if (this.disposed) throw new SandboxError('the sandbox was disposed');
    if (this.brokenBy) {
      throw new SandboxError(`the sandbox is broken (${this.brokenBy.message}); create a new one`);
    }
  }
}

function parseJsonText(json: string | undefined): unknown {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

function parseObject(json: string | undefined): Record<string, unknown> | undefined {
  const value = parseJsonText(json);
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function readCapabilities(json: string | undefined): SandboxCapabilities {
  const listed = parseObject(json);
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  return {
    methods: PLUGIN_METHOD_NAMES.filter((name) => strings(listed?.methods).includes(name)),
    jobs: strings(listed?.jobs),
  };
}

/** Its own wasm instance, so nothing an app does can poison another app's engine. */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const quickJs = await newQuickJSWASMModule();
  const runtime = quickJs.newRuntime();
  runtime.setMemoryLimit(options.memoryLimitBytes);
  runtime.setMaxStackSize(MAX_STACK_SIZE_BYTES);
  const context = runtime.newContext();
  return new Sandbox(runtime, context, options);
}
