import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
} from 'quickjs-emscripten';
import { SandboxAppError, SandboxError, SandboxMemoryError, SandboxTimeoutError } from './sandbox-errors';
import { DESCRIBE_SOURCE, HIDE_HOST_SOURCE, PRELUDE_SOURCE, TRAMPOLINE_SOURCE } from './sandbox-prelude';

/** The plugin methods PostHog's plugin server looks for (jobs are listed separately). */
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

/**
 * TRICKY: QuickJS's default stack limit is larger than the host's wasm stack allows, so deep guest
 * recursion overflowed the host instead of raising the guest's `InternalError: stack overflow`.
 * 256 KB was the largest size that kept the overflow inside the guest (issue 11 research).
 */
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

/** The host side of the guest's `fetch`. The guest gets a node-fetch-like Response around the answer. */
export type SandboxFetch = (url: string, init: SandboxFetchInit) => Promise<SandboxFetchResponse>;

export type SandboxLogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

export interface SandboxLogLine {
  level: SandboxLogLevel;
  /** The console arguments, strings as they are and other values as JSON, joined by spaces. */
  message: string;
}

/**
 * A host function the guest may call as `__hogbaseHost.call(name, ...args)` from a `setup` source
 * (see {@link SandboxLoadOptions}): JSON arguments in, a promise of a JSON value (or undefined) out.
 */
export type SandboxHostFunction = (...args: SandboxJson[]) => Promise<SandboxJson | undefined | void>;

export interface SandboxLoadOptions {
  /** JSON values set on `globalThis` before anything else runs. */
  globals?: Record<string, SandboxJson>;
  /**
   * Guest source run after the prelude and before the app, with the host bridge still in reach as
   * `globalThis.__hogbaseHost` (`call(name, ...args)` for {@link SandboxOptions.hostFunctions}). It
   * may set `globalThis.__hogbaseCallContext` to a function whose result (an array) is appended to
   * the arguments of every call: how the plugin API hands `meta` to each method. Both globals are
   * removed before the app runs.
   */
  setup?: string;
}

export interface SandboxOptions {
  /** The QuickJS runtime's heap limit; past it the app gets "out of memory" and the sandbox breaks. */
  memoryLimitBytes: number;
  /** Per call, wall clock: the call as a whole, including the host work it awaits such as `fetch`. */
  timeLimitMs: number;
  /**
   * Per call: the guest's own execution time, summed over the stretches it runs (the interrupt
   * handler stops it past this). Default: `timeLimitMs`. Loading the app has the same budget.
   */
  cpuLimitMs?: number;
  /** Omitted: the app has no `fetch` at all. */
  fetch?: SandboxFetch;
  /** Receives the app's console output. Omitted: the output is dropped. */
  onLog?: (line: SandboxLogLine) => void;
  /** What a `setup` source may call on the host (storage, jobs, …), by name. */
  hostFunctions?: Record<string, SandboxHostFunction>;
  /**
   * Called, from inside the guest's run, when the app goes on running after the interrupt handler
   * cut it off (see `runGuest`): only ending the thread it runs on stops it then. A pool thread
   * sets this to have the pool end it; a sandbox without it keeps interrupting the app, which may
   * hold its thread.
   */
  onRunaway?: (message: string) => void;
  /**
   * The longest JSON text (in characters) the host takes from the guest at once: a call's result,
   * one host call's arguments or fetch options (and four times this for those in flight together).
   * Past it the call or the host call rejects inside the app. Default 8 Mi characters. A console
   * line past 64 Ki characters is replaced by a line saying so.
   */
  maxPayloadLength?: number;
}

const DEFAULT_MAX_PAYLOAD_LENGTH = 8 * 1024 * 1024;
const MAX_LOG_LINE_LENGTH = 64 * 1024;

export interface SandboxCapabilities {
  /** The exported plugin methods, in the order of {@link PLUGIN_METHOD_NAMES}. */
  methods: PluginMethodName[];
  /** The keys of the exported `jobs` object whose values are functions. */
  jobs: string[];
}

/** A JSON value as it crosses the boundary (arguments in, results out). */
export type SandboxJson =
  null | boolean | number | string | SandboxJson[] | { [key: string]: SandboxJson | undefined };

interface PendingCall {
  id: number;
  method: string;
  /** Guest execution time charged to this call so far (every stretch run while it was in flight). */
  cpuUsedMs: number;
  resolve: (result: SandboxJson | undefined) => void;
  reject: (error: SandboxError) => void;
  timer: NodeJS.Timeout;
}

/** The guest functions the host keeps, all made before the app's code ran (see sandbox-prelude.ts). */
interface GuestHandles {
  describe: QuickJSHandle;
  invoke: QuickJSHandle;
  resolve: QuickJSHandle;
  capabilities: QuickJSHandle;
}

const LOG_LEVELS: ReadonlySet<string> = new Set<SandboxLogLevel>(['log', 'info', 'warn', 'error', 'debug']);

/**
 * One app's code in its own QuickJS runtime: no `process`, `require`, file system or environment,
 * only `console`, the bridged `fetch` and `module`/`exports`. Values cross only as JSON text made
 * by guest code that ran before the app, and the host trusts none of it: a result or error it
 * cannot read rejects that call (or breaks this sandbox), never the host.
 *
 * A time or memory error breaks the sandbox (`broken`): every call still in flight rejects and later
 * calls are refused, so the owner disposes it and creates a new one. App errors leave it usable.
 */
export class Sandbox {
  private plugin: QuickJSHandle | undefined;
  private guest: Partial<GuestHandles> = {};
  private loadedCapabilities: SandboxCapabilities | undefined;
  private readonly inFlight = new Map<number, PendingCall>();
  private nextCallId = 1;
  private brokenBy: SandboxError | undefined;
  private disposed = false;
  /**
   * Set by the interrupt handler when it cuts the guest off (what ran out of CPU), for the rest of
   * that run of the guest: the run then ends as a time error whatever the guest did afterwards.
   */
  private cutOff: string | undefined;
  /** Host promises (fetch, host functions) the guest still waits for: live guest objects. */
  private openHostCalls = 0;
  /** The JSON those host calls took from the guest, in characters. */
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

  /** True after a time or memory error: the sandbox refuses calls and must be recreated. */
  get broken(): boolean {
    return this.brokenBy !== undefined;
  }

  /** What `load` found the app to export. */
  get capabilities(): SandboxCapabilities {
    if (!this.loadedCapabilities) throw new SandboxError('the sandbox has no app loaded');
    return this.loadedCapabilities;
  }

  /**
   * Runs the app's CommonJS source once, after `options.globals` and `options.setup`.
   * Throws the errors {@link call} rejects with when the top-level code throws or exceeds a limit;
   * after a failed load, dispose the sandbox.
   */
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

  /**
   * Calls an exported method (`jobs.<name>` for a job) with JSON arguments and resolves with its
   * JSON result; async methods are awaited, with the guest's job queue run as host work settles.
   */
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
      // An async method settles once its promise does: run the jobs it queued.
      this.drainJobs();
    });
  }

  /** Frees the runtime. Calls still in flight reject. */
  dispose(): void {
    if (this.disposed) return;
    // TRICKY: QuickJS aborts (an emscripten abort that poisons its whole wasm instance) when a runtime
    // is freed while guest objects are still alive: a call cut off by a limit, or a fetch still out.
    // Such a sandbox is not freed piecemeal: its wasm instance is its own, so the garbage collector
    // takes the instance, heap and all, once nothing refers to it.
    const freeable = !this.broken && this.inFlight.size === 0 && this.openHostCalls === 0;
    this.failInFlight(new SandboxError('the sandbox was disposed'));
    this.disposed = true;
    if (!freeable) return;
    try {
      this.plugin?.dispose();
      for (const handle of Object.values(this.guest)) handle.dispose();
      this.context.dispose();
      this.runtime.dispose();
    } catch {
      // Left to the garbage collector with its wasm instance, as a broken sandbox is.
    }
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

  /** `host.settle(callId, ok, json)` from the trampoline: the call's result, or its error described. */
  private settleFromGuest(idHandle: QuickJSHandle, okHandle: QuickJSHandle, jsonHandle: QuickJSHandle): void {
    const context = this.context;
    if (context.typeof(idHandle) !== 'number') return;
    const pending = this.inFlight.get(context.getNumber(idHandle));
    if (!pending) return;
    // Whatever a call reports after the guest was cut off (its own "interrupted" error, or a result
    // after catching it) is dropped: the run ends as a time error (see runGuest).
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

  /**
   * A guest promise settled by host work: resolved with the string `work` gives, rejected with an
   * Error carrying the host error's message. A late answer after dispose is dropped.
   */
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

  /** Runs guest promise jobs (continuations after host work settled) under the CPU budget. */
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
   * Enters the guest: the interrupt handler stops it once the calls it runs for (the stretch is
   * charged to each) have used the CPU budget. Time and memory errors break the sandbox (rejecting
   * every call in flight) before they are rethrown; a host exception from the engine does too.
   *
   * TRICKY: a stretch the interrupt handler cut off ends as a time error, decided here from the
   * handler having fired and never from what the guest reports. QuickJS's "uncatchable" interrupt
   * becomes an ordinary rejection at an async function, a promise executor or a job, which the app
   * may catch, and the trampoline then reports it like a throw ("InternalError: interrupted", which
   * an app can also throw itself). The handler keeps interrupting for the rest of the stretch; if it
   * is polled again the guest went on past being cut off (QuickJS also drops an interrupt in some
   * paths), and `onRunaway` has its thread ended.
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

  /** Whether the interrupt handler cut the guest off in the stretch running now (or the last one). */
  private get wasCutOff(): boolean {
    return this.cutOff !== undefined;
  }

  /** Evaluates source; with `use`, passes the resulting function to it and disposes the function. */
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

  /** Calls a guest function and disposes the arguments (owned by this call); the caller owns `func`. */
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

  /**
   * The characters a host call takes from the guest, refused (inside the app) past the payload
   * limit, alone or with the host calls still in flight: what the host holds for a sandbox is bounded.
   */
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

  /** A guest string's length, read without copying it (0 for any other value). */
  private lengthOf(handle: QuickJSHandle): number {
    if (this.context.typeof(handle) !== 'string') return 0;
    const length = this.context.getProp(handle, 'length');
    const value = this.context.getNumber(length);
    length.dispose();
    return value;
  }

  /** The text of a guest string; undefined for any other value (converting one would run guest code). */
  private stringOf(handle: QuickJSHandle): string | undefined {
    return this.context.typeof(handle) === 'string' ? this.context.getString(handle) : undefined;
  }

  /**
   * Turns a thrown guest value into the error the caller sees. Called while the guest is entered
   * (its fields are read by the guest's own `describe`, under the interrupt handler); a time error
   * is not told from the value but from the handler having fired (see runGuest).
   */
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

  /** The error for what `describe` said about a thrown value (see DESCRIBE_SOURCE). */
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

  /** An exception from the engine itself (not the app): the runtime can no longer be trusted. */
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

/** The capabilities JSON the trampoline made, kept to what a plugin may export. */
function readCapabilities(json: string | undefined): SandboxCapabilities {
  const listed = parseObject(json);
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  return {
    methods: PLUGIN_METHOD_NAMES.filter((name) => strings(listed?.methods).includes(name)),
    jobs: strings(listed?.jobs),
  };
}

/**
 * Creates an empty sandbox with its own QuickJS runtime in its own wasm instance (about 6 ms and
 * 1 MiB on top of the app's heap), so that nothing an app does can poison another app's engine;
 * `load` the app next.
 */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const quickJs = await newQuickJSWASMModule();
  const runtime = quickJs.newRuntime();
  runtime.setMemoryLimit(options.memoryLimitBytes);
  runtime.setMaxStackSize(MAX_STACK_SIZE_BYTES);
  const context = runtime.newContext();
  return new Sandbox(runtime, context, options);
}
