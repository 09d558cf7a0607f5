import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type {
  PluginMethodName,
  SandboxCapabilities,
  SandboxJson,
  SandboxLoadOptions,
  SandboxOptions,
} from './sandbox.service';
import {
  SandboxAppError,
  SandboxBudgetError,
  SandboxError,
  SandboxMemoryError,
  SandboxTimeoutError,
} from './sandbox.errors';
import type {
  FromSandboxThread,
  SandboxFailure,
  SandboxThreadSpec,
  ToSandboxThread,
} from './sandbox-thread.types';

/** Beyond a call's own time limit, before the thread counts as stuck. */
const ANSWER_GRACE_MS = 5_000;
/** A wasm instance, on a thread that may itself be starting. */
const CREATE_TIMEOUT_MS = 30_000;
const DEFAULT_THREAD_HEAP_MB = 256;
/** A loaded sandbox not called yet is kept from eviction this long. */
const LOADED_PROTECTION_MS = 1_000;

export interface SandboxPoolOptions {
  threads: number;
  /** Each sandbox holds its heap limit of it from creation to dispose. */
  memoryBudgetBytes: number;
  /** The setting named in the budget's errors. */
  budgetName?: string;
  /** Messages and JSON on their way, apart from the sandboxes' wasm memory. */
  threadHeapMb?: number;
  /** A thread that failed, an eviction. */
  onNotice?: (notice: SandboxPoolNotice) => void;
}

export type SandboxPoolNotice =
  { type: 'thread-failed'; message: string; sandboxes: number } | { type: 'evicted'; reservedBytes: number };

let nextUse = 0;

interface PendingRequest {
  sandbox: PooledSandbox;
  resolve: (answer: Extract<FromSandboxThread, { type: 'answer' }>) => void;
  reject: (error: SandboxError) => void;
  timer: NodeJS.Timeout;
}

/**
 * App code never runs on the thread that created the pool; host calls and console lines come back
 * to it as messages. A thread that fails (or runs an app past its CPU cut-off) fails its calls and
 * breaks its sandboxes. Past the memory budget the least recently used idle sandbox is evicted;
 * with none idle, a new one waits up to its time limit, then SandboxBudgetError.
 */
export class SandboxPool {
  private readonly threads: SandboxThread[] = [];
  private readonly live = new Set<PooledSandbox>();
  private reservedBytes = 0;
  private waiters: (() => void)[] = [];
  private nextSandboxId = 1;
  private closed = false;

  constructor(private readonly options: SandboxPoolOptions) {}

  async createSandbox(options: SandboxOptions): Promise<PooledSandbox> {
    if (this.closed) throw new SandboxError('the sandbox pool is closed');
    const bytes = options.memoryLimitBytes;
    await this.reserve(bytes, options.timeLimitMs);
    const thread = this.pickThread();
    const sandbox = new PooledSandbox(this.nextSandboxId++, thread, options, bytes, this);
    this.live.add(sandbox);
    thread.sandboxes.set(sandbox.id, sandbox);
    const spec: SandboxThreadSpec = {
      memoryLimitBytes: options.memoryLimitBytes,
      timeLimitMs: options.timeLimitMs,
      cpuLimitMs: options.cpuLimitMs ?? options.timeLimitMs,
      maxPayloadLength: options.maxPayloadLength,
      hasFetch: options.fetch !== undefined,
      hostFunctionNames: Object.keys(options.hostFunctions ?? {}),
    };
    try {
      await thread.request(sandbox, CREATE_TIMEOUT_MS, (requestId) => ({
        type: 'create',
        requestId,
        sandboxId: sandbox.id,
        spec,
      }));
    } catch (error) {
      sandbox.dispose();
      throw error;
    }
    return sandbox;
  }

  stats(): { sandboxes: number; reservedBytes: number; threads: number } {
    return { sandboxes: this.live.size, reservedBytes: this.reservedBytes, threads: this.threads.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((thread) => thread.stop('the sandbox pool was closed', false)));
    this.wake();
  }

  /** @internal disposed, evicted, or its thread failed. */
  release(sandbox: PooledSandbox): void {
    if (!this.live.delete(sandbox)) return;
    this.reservedBytes -= sandbox.reservedBytes;
    this.wake();
  }

  /** @internal a sandbox may have become evictable. */
  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  /** @internal */
  threadFailed(thread: SandboxThread, message: string | undefined): void {
    const index = this.threads.indexOf(thread);
    if (index >= 0) this.threads.splice(index, 1);
    if (message !== undefined) {
      this.options.onNotice?.({ type: 'thread-failed', message, sandboxes: thread.sandboxes.size });
    }
  }

  private async reserve(bytes: number, waitMs: number): Promise<void> {
    const budget = this.options.memoryBudgetBytes;
    const name = this.options.budgetName ?? 'the sandboxes’ memory budget';
    if (bytes > budget) {
      throw new SandboxBudgetError(
        `a sandbox of ${megabytes(bytes)} MB does not fit in ${name} (${megabytes(budget)} MB)`,
      );
    }
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.closed) throw new SandboxError('the sandbox pool is closed');
      if (this.reservedBytes + bytes <= budget) {
        this.reservedBytes += bytes;
        return;
      }
      const idle = this.leastRecentlyUsedIdle();
      if (idle) {
        idle.evict(
          new SandboxBudgetError(`the sandbox was unloaded to make room for another within ${name}`),
        );
        this.options.onNotice?.({ type: 'evicted', reservedBytes: this.reservedBytes });
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new SandboxBudgetError(
          `no room for another sandbox: ${this.live.size} sandboxes in calls hold ${megabytes(this.reservedBytes)} MB of ${name} (${megabytes(budget)} MB)`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private leastRecentlyUsedIdle(): PooledSandbox | undefined {
    let oldest: PooledSandbox | undefined;
    for (const sandbox of this.live) {
      if (!sandbox.evictable) continue;
      if (!oldest || sandbox.lastUsed < oldest.lastUsed) oldest = sandbox;
    }
    return oldest;
  }

  private pickThread(): SandboxThread {
    let least: SandboxThread | undefined;
    for (const thread of this.threads) {
      if (!least || thread.sandboxes.size < least.sandboxes.size) least = thread;
    }
    if (least && (least.sandboxes.size === 0 || this.threads.length >= this.options.threads)) return least;
    const thread = new SandboxThread(this, this.options.threadHeapMb ?? DEFAULT_THREAD_HEAP_MB);
    this.threads.push(thread);
    return thread;
  }
}

class SandboxThread {
  readonly sandboxes = new Map<number, PooledSandbox>();
  private readonly requests = new Map<number, PendingRequest>();
  private readonly worker: Worker;
  private nextRequestId = 1;
  private ended: string | undefined;

  constructor(
    private readonly pool: SandboxPool,
    heapMb: number,
  ) {
    // .ts under npm start's and Jest's transpilers, .js in the image.
    const file = path.join(__dirname, `sandbox-thread.worker${path.extname(__filename)}`);
    this.worker = new Worker(file, {
      execArgv: file.endsWith('.ts') ? ['--require', require.resolve('@swc-node/register')] : undefined,
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 16 },
    });
    // The pool's owner decides when the process ends, not an idle thread.
    this.worker.unref();
    this.worker.on('message', (message: FromSandboxThread) => this.receive(message));
    this.worker.on('error', (error: Error) => this.fail(`the sandbox thread failed: ${error.message}`));
    this.worker.on('exit', (code) => this.fail(`the sandbox thread exited (code ${code})`));
  }

  /** A failure rejects as the sandbox error it was. */
  request(
    sandbox: PooledSandbox,
    timeoutMs: number,
    message: (requestId: number) => ToSandboxThread,
  ): Promise<Extract<FromSandboxThread, { type: 'answer' }>> {
    return new Promise((resolve, reject) => {
      if (this.ended !== undefined) {
        reject(new SandboxError(this.ended));
        return;
      }
      const requestId = this.nextRequestId++;
      sandbox.activeRequests += 1;
      const pending: PendingRequest = {
        sandbox,
        resolve,
        reject,
        timer: setTimeout(() => {
          // The thread enforces the time limits itself: no answer past them means it is stuck.
          this.settle(requestId, () =>
            reject(new SandboxTimeoutError(`the sandbox thread did not answer within ${timeoutMs} ms`)),
          );
          void this.stop(`the sandbox thread did not answer within ${timeoutMs} ms and was ended`);
        }, timeoutMs),
      };
      this.requests.set(requestId, pending);
      try {
        this.worker.postMessage(message(requestId));
      } catch (error) {
        this.settle(requestId, () =>
          reject(
            new SandboxError(`the request could not be sent to the sandbox thread: ${messageOf(error)}`),
          ),
        );
      }
    });
  }

  post(message: ToSandboxThread): void {
    if (this.ended === undefined) this.worker.postMessage(message);
  }

  async stop(reason: string, notify = true): Promise<void> {
    this.fail(reason, notify);
    await this.worker.terminate();
  }

  private settle(requestId: number, outcome: () => void): void {
    const pending = this.requests.get(requestId);
    if (!pending) return;
    this.requests.delete(requestId);
    clearTimeout(pending.timer);
    pending.sandbox.activeRequests -= 1;
    pending.sandbox.lastUsed = nextUse++;
    outcome();
    this.pool.wake();
  }

  private receive(message: FromSandboxThread): void {
    switch (message.type) {
      case 'answer': {
        const pending = this.requests.get(message.requestId);
        if (!pending) return;
        const error = message.failure ? errorOf(message.failure) : undefined;
        if (message.broken) pending.sandbox.markBroken(error ?? new SandboxError('the sandbox broke'));
        this.settle(message.requestId, () => (error ? pending.reject(error) : pending.resolve(message)));
        return;
      }
      case 'host-call': {
        const sandbox = this.sandboxes.get(message.sandboxId);
        const work = sandbox
          ? sandbox.runHostCall(message.kind, message.name, message.args)
          : Promise.reject(new Error('the sandbox is gone'));
        void work.then(
          (value) => this.answerHostCall(message.hostCallId, { value }),
          (error: unknown) => this.answerHostCall(message.hostCallId, { error: messageOf(error) }),
        );
        return;
      }
      case 'runaway': {
        // The app's calls time out; the thread's other sandboxes break and load again at their next call.
        const error = new SandboxTimeoutError(message.message);
        const sandbox = this.sandboxes.get(message.sandboxId);
        sandbox?.markBroken(error);
        for (const [requestId, pending] of [...this.requests]) {
          if (pending.sandbox === sandbox) this.settle(requestId, () => pending.reject(error));
        }
        void this.stop(
          `the sandbox thread was ended: an app went on running past its CPU budget (${message.message})`,
        );
        return;
      }
      case 'log': {
        const onLog = this.sandboxes.get(message.sandboxId)?.options.onLog;
        if (!onLog) return;
        for (const line of message.lines) {
          try {
            onLog(line);
          } catch {
            // A failing log sink must not stop the next line.
          }
        }
        return;
      }
    }
  }

  private answerHostCall(
    hostCallId: number,
    answer: { value?: SandboxJson | undefined; error?: string },
  ): void {
    try {
      this.post({ type: 'host-answer', hostCallId, ...answer });
    } catch (error) {
      this.post({
        type: 'host-answer',
        hostCallId,
        error: `the host's answer could not be sent: ${messageOf(error)}`,
      });
    }
  }

  /** Its requests reject; its sandboxes break and give their budget back. */
  private fail(reason: string, notify = true): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    const error = new SandboxError(reason);
    for (const requestId of [...this.requests.keys()]) {
      const pending = this.requests.get(requestId);
      this.settle(requestId, () => pending?.reject(error));
    }
    for (const sandbox of this.sandboxes.values()) sandbox.markBroken(error);
    this.pool.threadFailed(this, notify ? reason : undefined);
    for (const sandbox of [...this.sandboxes.values()]) this.pool.release(sandbox);
    this.sandboxes.clear();
  }
}

/** Used like {@link Sandbox}, but `load` is asynchronous. */
export class PooledSandbox {
  /** @internal */
  activeRequests = 0;
  /** @internal a counter: calls end within the same millisecond. */
  lastUsed = nextUse++;
  private loadedCapabilities: SandboxCapabilities | undefined;
  private brokenBy: SandboxError | undefined;
  private disposed = false;
  /** Not evicted before its owner loaded it and ran `setupPlugin` (or LOADED_PROTECTION_MS passed). */
  private used = false;
  private protectedUntil = Date.now() + CREATE_TIMEOUT_MS;

  /** @internal use {@link SandboxPool.createSandbox} */
  constructor(
    readonly id: number,
    private readonly thread: SandboxThread,
    readonly options: SandboxOptions,
    readonly reservedBytes: number,
    private readonly pool: SandboxPool,
  ) {}

  /** After a time or memory error, an eviction or its thread's failure: create a new one. */
  get broken(): boolean {
    return this.brokenBy !== undefined;
  }

  /** @internal */
  get evictable(): boolean {
    return this.activeRequests === 0 && !this.disposed && (this.used || Date.now() >= this.protectedUntil);
  }

  get capabilities(): SandboxCapabilities {
    if (!this.loadedCapabilities) throw new SandboxError('the sandbox has no app loaded');
    return this.loadedCapabilities;
  }

  async load(code: string, options: SandboxLoadOptions = {}): Promise<SandboxCapabilities> {
    this.assertUsable();
    const loadLimitMs = (this.options.cpuLimitMs ?? this.options.timeLimitMs) + ANSWER_GRACE_MS;
    const answer = await this.thread.request(this, loadLimitMs, (requestId) => ({
      type: 'load',
      requestId,
      sandboxId: this.id,
      code,
      options,
    }));
    if (!answer.capabilities) throw new SandboxError('the sandbox thread gave no capabilities');
    this.loadedCapabilities = answer.capabilities;
    this.protectedUntil = Date.now() + LOADED_PROTECTION_MS;
    return answer.capabilities;
  }

  async call(
    method: PluginMethodName | `jobs.${string}`,
    ...args: SandboxJson[]
  ): Promise<SandboxJson | undefined> {
    this.assertUsable();
    const capabilities = this.capabilities;
    const exported = method.startsWith('jobs.')
      ? capabilities.jobs.includes(method.slice('jobs.'.length))
      : (capabilities.methods as string[]).includes(method);
    if (!exported) throw new SandboxError(`the app does not export ${method}`);
    try {
      const answer = await this.thread.request(
        this,
        this.options.timeLimitMs + ANSWER_GRACE_MS,
        (requestId) => ({
          type: 'call',
          requestId,
          sandboxId: this.id,
          method,
          args,
        }),
      );
      return answer.value;
    } finally {
      this.used = true;
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.brokenBy ??= new SandboxError('the sandbox was disposed');
    this.thread.sandboxes.delete(this.id);
    try {
      this.thread.post({ type: 'dispose', sandboxId: this.id });
    } catch {}
    this.pool.release(this);
  }

  /** @internal */
  markBroken(error: SandboxError): void {
    this.brokenBy ??= error;
  }

  /** @internal the owner sees it broken and loads it again. */
  evict(error: SandboxError): void {
    this.markBroken(error);
    this.dispose();
  }

  /** @internal on the creating thread. */
  async runHostCall(
    kind: 'fetch' | 'function',
    name: string,
    args: SandboxJson[],
  ): Promise<SandboxJson | undefined> {
    if (this.disposed) throw new Error('the sandbox was disposed');
    if (kind === 'fetch') {
      const [url, init] = args;
      const fetch = this.options.fetch;
      if (
        !fetch ||
        typeof url !== 'string' ||
        init === null ||
        typeof init !== 'object' ||
        Array.isArray(init)
      ) {
        throw new Error('fetch is not available');
      }
      return (await fetch(url, init)) as unknown as SandboxJson;
    }
    const functions = this.options.hostFunctions ?? {};
    const hostFunction = Object.hasOwn(functions, name) ? functions[name] : undefined;
    if (!hostFunction) throw new Error(`the host has no function ${name}`);
    return (await hostFunction(...args)) ?? undefined;
  }

  private assertUsable(): void {
    if (this.disposed && !this.brokenBy) throw new SandboxError('the sandbox was disposed');
    if (this.brokenBy) {
      throw new SandboxError(`the sandbox is broken (${this.brokenBy.message}); create a new one`);
    }
  }
}

function errorOf(failure: SandboxFailure): SandboxError {
  switch (failure.kind) {
    case 'app':
      return new SandboxAppError(failure.message, failure.appErrorName, failure.appStack);
    case 'timeout':
      return new SandboxTimeoutError(failure.message);
    case 'memory':
      return new SandboxMemoryError(failure.message);
    case 'sandbox':
      return new SandboxError(failure.message);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function megabytes(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}
