import { Worker } from 'node:worker_threads';
import { HogQLError, quoteExpression } from './hogql.errors';

/**
 * TRICKY: `@posthog/hogql-parser` (ANTLR in WebAssembly) is synchronous, slows steeply with nesting,
 * and some inputs trap its instance for good. In a worker, an overrun terminates the worker and a
 * trap costs only that worker; the next parse starts a fresh one. One parse at a time; callers queue.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const createHogQLParser = require(workerData.parserPath);
createHogQLParser().then(
  (parser) => {
    parentPort.on('message', (message) => {
      try {
        const json =
          message.kind === 'select' ? parser.parseSelect(message.text, false) : parser.parseExpr(message.text, false);
        parentPort.postMessage({ id: message.id, json });
      } catch (error) {
        parentPort.postMessage({ id: message.id, trap: String((error && error.message) || error) });
        // The instance is unusable after a trap: end this worker, the host starts another.
        process.exit(1);
      }
    });
    parentPort.postMessage({ ready: true });
  },
  (error) => parentPort.postMessage({ failed: String((error && error.message) || error) }),
);
`;

type ParseKind = 'expr' | 'select';

const PARSE_NOUNS: Readonly<Record<ParseKind, string>> = { expr: 'Expression', select: 'Query' };

interface WorkerReply {
  id?: number;
  json?: string;
  trap?: string;
  ready?: boolean;
  failed?: string;
}

function isWorkerReply(value: unknown): value is WorkerReply {
  return typeof value === 'object' && value !== null;
}

export interface HogQLParserOptions {
  /** How long the worker may take to load the WebAssembly module. */
  startTimeoutMs?: number;
}

export class HogQLParser {
  private readonly startTimeoutMs: number;
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 0;
  private closed = false;

  constructor(options: HogQLParserOptions = {}) {
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
  }

  /** The AST or the parser's `{error: true, ...}`; a HogQLError when it overruns or crashes. */
  parseExpr(text: string, timeoutMs: number): Promise<unknown> {
    return this.enqueue('expr', text, timeoutMs);
  }

  /** A whole query (`SelectQuery` or `SelectSetQuery`), as parseExpr answers. */
  parseSelect(text: string, timeoutMs: number): Promise<unknown> {
    return this.enqueue('select', text, timeoutMs);
  }

  /** Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker ?? (await this.starting?.catch(() => undefined));
    this.worker = undefined;
    this.starting = undefined;
    if (worker) await worker.terminate();
  }

  private enqueue(kind: ParseKind, text: string, timeoutMs: number): Promise<unknown> {
    const run = this.queue.then(
      () => this.parseNow(kind, text, timeoutMs),
      () => this.parseNow(kind, text, timeoutMs),
    );
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async parseNow(kind: ParseKind, text: string, timeoutMs: number): Promise<unknown> {
    const noun = PARSE_NOUNS[kind];
    if (timeoutMs <= 0) {
      throw new HogQLError(`${noun} ${quoteExpression(text)} is too complex to parse in time`, {
        kind: 'limit',
        expression: text,
      });
    }
    const worker = await this.ensureWorker();
    const id = (this.nextId += 1);
    const json = await new Promise<string>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (reply: unknown): void => {
        if (!isWorkerReply(reply) || reply.id !== id) return;
        cleanup();
        if (typeof reply.json === 'string') {
          resolve(reply.json);
          return;
        }
        this.discard(worker);
        reject(
          new HogQLError(`${noun} ${quoteExpression(text)} could not be parsed`, {
            kind: 'syntax',
            expression: text,
          }),
        );
      };
      const onError = (error: Error): void => {
        cleanup();
        this.discard(worker);
        reject(new Error(`The HogQL parser worker failed: ${error.message}`, { cause: error }));
      };
      const onExit = (code: number): void => {
        cleanup();
        this.discard(worker);
        reject(new Error(`The HogQL parser worker exited (code ${code})`));
      };
      const timer = setTimeout(() => {
        cleanup();
        this.discard(worker);
        reject(
          new HogQLError(`${noun} ${quoteExpression(text)} is too complex to parse in time`, {
            kind: 'limit',
            expression: text,
          }),
        );
      }, timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, text, kind });
    });
    return JSON.parse(json) as unknown;
  }

  private discard(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    void worker.terminate().catch(() => undefined);
  }

  private ensureWorker(): Promise<Worker> {
    if (this.worker) return Promise.resolve(this.worker);
    if (this.closed) return Promise.reject(new Error('The HogQL parser is closed'));
    this.starting ??= this.startWorker().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private startWorker(): Promise<Worker> {
    // NOTE: resolved here (not in the worker) so the worker loads exactly the package this
    // process resolves, under Jest's resolver as well as Node's.
    const parserPath = require.resolve('@posthog/hogql-parser');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { parserPath } });
    // An idle parser never keeps the process alive; a pending parse holds its own timer.
    worker.unref();
    return new Promise<Worker>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const fail = (error: Error): void => {
        cleanup();
        void worker.terminate().catch(() => undefined);
        reject(error);
      };
      const onMessage = (reply: unknown): void => {
        if (!isWorkerReply(reply)) return;
        if (reply.ready) {
          cleanup();
          if (this.closed) {
            fail(new Error('The HogQL parser is closed'));
            return;
          }
          this.worker = worker;
          resolve(worker);
        } else if (typeof reply.failed === 'string') {
          fail(new Error(`The HogQL parser could not start: ${reply.failed}`));
        }
      };
      const onError = (error: Error): void =>
        fail(new Error(`The HogQL parser could not start: ${error.message}`, { cause: error }));
      const onExit = (code: number): void =>
        fail(new Error(`The HogQL parser worker exited while starting (code ${code})`));
      const timer = setTimeout(
        () => fail(new Error(`The HogQL parser did not start within ${this.startTimeoutMs} ms`)),
        this.startTimeoutMs,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  }
}

let sharedParser: HogQLParser | undefined;

export function sharedHogQLParser(): HogQLParser {
  sharedParser ??= new HogQLParser();
  return sharedParser;
}

/** For tests and shutdown; a later use starts a new worker. */
export async function closeSharedHogQLParser(): Promise<void> {
  const parser = sharedParser;
  sharedParser = undefined;
  await parser?.close();
}
