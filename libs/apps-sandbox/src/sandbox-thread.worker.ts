import { parentPort } from 'node:worker_threads';
import {
  createSandbox,
  type Sandbox,
  type SandboxCapabilities,
  type SandboxFetchResponse,
  type SandboxHostFunction,
  type SandboxJson,
  type SandboxLogLine,
} from './sandbox.service';
import { SandboxAppError, SandboxError, SandboxMemoryError, SandboxTimeoutError } from './sandbox.errors';
import type {
  FromSandboxThread,
  SandboxFailure,
  SandboxThreadSpec,
  ToSandboxThread,
} from './sandbox-thread.types';

/** Host calls are main-thread work: an app firing them unawaited must not spend the main thread's CPU. */
const MAX_OPEN_HOST_CALLS = 1_000;
/** The rest are counted and the count is sent instead. */
const MAX_LOG_LINES_PER_SECOND = 1_000;
const MAX_LOG_LINE_LENGTH = 10_000;

interface HostCall {
  sandboxId: number;
  resolve: (value: SandboxJson | undefined) => void;
  reject: (error: Error) => void;
}

interface HostedSandbox {
  sandbox: Sandbox;
  openHostCalls: number;
  logWindowStart: number;
  logLinesInWindow: number;
  droppedLogLines: number;
  logBuffer: SandboxLogLine[];
}

/** Started by sandbox-pool.service.ts; everything a sandbox asks of the host crosses to the main thread as a message. */
function runSandboxThread(port: NonNullable<typeof parentPort>): void {
  const send = (message: FromSandboxThread) => port.postMessage(message);
  const hosted = new Map<number, HostedSandbox>();
  const hostCalls = new Map<number, HostCall>();
  let nextHostCallId = 1;

  const hostCall = (
    sandboxId: number,
    kind: 'fetch' | 'function',
    name: string,
    args: SandboxJson[],
  ): Promise<SandboxJson | undefined> => {
    const entry = hosted.get(sandboxId);
    if (!entry) return Promise.reject(new Error('the sandbox is gone'));
    if (entry.openHostCalls >= MAX_OPEN_HOST_CALLS) {
      return Promise.reject(
        new Error(`more than ${MAX_OPEN_HOST_CALLS} host calls at once: await them before making more`),
      );
    }
    entry.openHostCalls += 1;
    const hostCallId = nextHostCallId++;
    return new Promise<SandboxJson | undefined>((resolve, reject) => {
      hostCalls.set(hostCallId, { sandboxId, resolve, reject });
      send({ type: 'host-call', hostCallId, sandboxId, kind, name, args });
    }).finally(() => {
      entry.openHostCalls -= 1;
    });
  };

  const flushLog = (sandboxId: number) => {
    const entry = hosted.get(sandboxId);
    if (!entry || entry.logBuffer.length === 0) return;
    const lines = entry.logBuffer;
    entry.logBuffer = [];
    send({ type: 'log', sandboxId, lines });
  };

  const onLog = (sandboxId: number, line: SandboxLogLine) => {
    const entry = hosted.get(sandboxId);
    if (!entry) return;
    const now = Date.now();
    if (now - entry.logWindowStart >= 1_000) {
      if (entry.droppedLogLines > 0) {
        entry.logBuffer.push({
          level: 'warn',
          message: `${entry.droppedLogLines} console lines dropped (more than ${MAX_LOG_LINES_PER_SECOND} a second)`,
        });
      }
      entry.logWindowStart = now;
      entry.logLinesInWindow = 0;
      entry.droppedLogLines = 0;
    }
    if (entry.logLinesInWindow >= MAX_LOG_LINES_PER_SECOND) {
      entry.droppedLogLines += 1;
      return;
    }
    entry.logLinesInWindow += 1;
    if (entry.logBuffer.length === 0) setImmediate(() => flushLog(sandboxId));
    entry.logBuffer.push({ level: line.level, message: line.message.slice(0, MAX_LOG_LINE_LENGTH) });
  };

  const create = async (sandboxId: number, spec: SandboxThreadSpec): Promise<void> => {
    const hostFunctions: Record<string, SandboxHostFunction> = {};
    for (const name of spec.hostFunctionNames) {
      hostFunctions[name] = (...args) => hostCall(sandboxId, 'function', name, args);
    }
    const sandbox = await createSandbox({
      memoryLimitBytes: spec.memoryLimitBytes,
      timeLimitMs: spec.timeLimitMs,
      cpuLimitMs: spec.cpuLimitMs,
      maxPayloadLength: spec.maxPayloadLength,
      fetch: spec.hasFetch
        ? async (url, init) =>
            (await hostCall(sandboxId, 'fetch', url, [
              url,
              init as SandboxJson,
            ])) as unknown as SandboxFetchResponse
        : undefined,
      hostFunctions,
      onLog: (line) => onLog(sandboxId, line),
      // From inside the app's run, which goes on until the pool ends this thread.
      onRunaway: (message) => send({ type: 'runaway', sandboxId, message }),
    });
    hosted.set(sandboxId, {
      sandbox,
      openHostCalls: 0,
      logWindowStart: Date.now(),
      logLinesInWindow: 0,
      droppedLogLines: 0,
      logBuffer: [],
    });
  };

  const answer = (
    requestId: number,
    sandboxId: number,
    outcome: Promise<{ value?: SandboxJson; capabilities?: SandboxCapabilities }>,
  ) => {
    const reply = (message: FromSandboxThread) => {
      try {
        send(message);
      } catch (error) {
        send({ type: 'answer', requestId, broken: isBroken(sandboxId), failure: failureOf(error) });
      }
    };
    void outcome.then(
      (result) => reply({ type: 'answer', requestId, broken: isBroken(sandboxId), ...result }),
      (error: unknown) =>
        reply({ type: 'answer', requestId, broken: isBroken(sandboxId), failure: failureOf(error) }),
    );
  };
  const isBroken = (sandboxId: number) => hosted.get(sandboxId)?.sandbox.broken ?? true;
  const sandboxOf = (sandboxId: number): Sandbox => {
    const entry = hosted.get(sandboxId);
    if (!entry) throw new SandboxError('the sandbox is gone');
    return entry.sandbox;
  };

  port.on('message', (message: ToSandboxThread) => {
    switch (message.type) {
      case 'create':
        answer(
          message.requestId,
          message.sandboxId,
          create(message.sandboxId, message.spec).then(() => ({})),
        );
        break;
      case 'load':
        answer(
          message.requestId,
          message.sandboxId,
          Promise.resolve().then(() => ({
            capabilities: sandboxOf(message.sandboxId).load(message.code, message.options),
          })),
        );
        break;
      case 'call':
        answer(
          message.requestId,
          message.sandboxId,
          Promise.resolve()
            .then(() => sandboxOf(message.sandboxId).call(message.method, ...message.args))
            .then((value) => ({ value })),
        );
        break;
      case 'dispose': {
        const entry = hosted.get(message.sandboxId);
        hosted.delete(message.sandboxId);
        entry?.sandbox.dispose();
        for (const [id, call] of hostCalls) {
          if (call.sandboxId !== message.sandboxId) continue;
          hostCalls.delete(id);
          call.reject(new Error('the sandbox was disposed'));
        }
        break;
      }
      case 'host-answer': {
        const call = hostCalls.get(message.hostCallId);
        hostCalls.delete(message.hostCallId);
        if (!call) break;
        if (message.error !== undefined) call.reject(new Error(message.error));
        else call.resolve(message.value);
        break;
      }
    }
  });
}

function failureOf(error: unknown): SandboxFailure {
  if (error instanceof SandboxAppError) {
    return {
      kind: 'app',
      message: error.message,
      appErrorName: error.appErrorName,
      appStack: error.appStack,
    };
  }
  if (error instanceof SandboxTimeoutError) return { kind: 'timeout', message: error.message };
  if (error instanceof SandboxMemoryError) return { kind: 'memory', message: error.message };
  if (error instanceof SandboxError) return { kind: 'sandbox', message: error.message };
  return {
    kind: 'sandbox',
    message: `the sandbox failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

if (parentPort) runSandboxThread(parentPort);
