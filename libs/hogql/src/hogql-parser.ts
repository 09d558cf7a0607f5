import { Worker } from 'node:worker_threads';
import { HogQLError, quoteExpression } from './hogql-error';

/**
 * Runs `@posthog/hogql-parser` (ANTLR compiled to WebAssembly) in a worker thread.
 *
 * TRICKY: the parser is synchronous, its time grows steeply with nesting (a 50-level nested call
 * takes seconds), and some inputs make the WebAssembly instance trap ("memory access out of
 * bounds"), after which that instance is unusable. In the request thread that would mean a blocked
 * event loop or a broken parser for every later request. In a worker, a parse that overruns its
 * deadline is cut off by terminating the worker, and a trap only costs that worker; the next parse
 * starts a fresh one. Text limits (hogql-limits.ts) keep both rare; this is the hard bound.
 *
 * One worker parses one text at a time; callers queue. A parse of a usual expression takes well
 * under a millisecond once the worker is warm; a whole SELECT of a few dozen columns takes tens to
 * hundreds of milliseconds (the grammar's select list is far slower to parse than an expression).
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

/** What the worker parses: `parseExpr` (one expression) or `parseSelect` (a whole query). */
type ParseKind = 'expr' | 'select';

/** How errors name the parsed text. */
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

  /**
   * Parses one HogQL expression and returns the parser's JSON result (the AST, or its
   * `{error: true, ...}` object), with code-point positions. Throws a HogQLError when the parse
   * overruns `timeoutMs` or crashes the parser.
   */
  parseExpr(text: string, timeoutMs: number): Promise<unknown> {
    return this.enqueue('expr', text, timeoutMs);
  }

  /**
   * Parses a whole HogQL query (`SELECT …`, or a set of them joined by UNION and the like) the same
   * way: the parser's JSON result (a `SelectQuery` or `SelectSetQuery` node, or its error object),
   * with code-point positions into `text`. Throws a HogQLError when the parse overruns `timeoutMs`
   * or crashes the parser.
   */
  parseSelect(text: string, timeoutMs: number): Promise<unknown> {
    return this.enqueue('select', text, timeoutMs);
  }

  /** Stops the worker. Safe to call twice; a later parse starts a new one unless closed. */
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

/** The process-wide parser the compilers use unless given their own. */
export function sharedHogQLParser(): HogQLParser {
  sharedParser ??= new HogQLParser();
  return sharedParser;
}

/** Stops the process-wide parser's worker (tests, shutdown). A later use starts a new one. */
export async function closeSharedHogQLParser(): Promise<void> {
  const parser = sharedParser;
  sharedParser = undefined;
  await parser?.close();
}
