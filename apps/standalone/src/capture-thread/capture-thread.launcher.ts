import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { CaptureConfig, LogLevel } from '@hogbase/config';
import type { EventPublisher, QueueReadiness } from '@hogbase/queue';
import type { Readiness } from '@hogbase/service-runtime';
import type { CaptureThreadData, FromCaptureThread, ToCaptureThread } from './capture-thread.protocol';
import { toPublishFailure } from './port.publisher';

const QUEUE_READINESS_POLL_MS = 500;
const ANSWER_TIMEOUT_MS = 5_000;

export interface CaptureThreadOptions {
  config: CaptureConfig;
  logLevel: LogLevel;
  databaseUrl: string;
  /** The in-process bus, or Kafka. */
  publisher: EventPublisher;
  logger: Logger;
}

export interface CaptureThread {
  url: string;
  ready(): Promise<Readiness>;
  metrics: Pick<Registry, 'metrics'>;
  /** Intake first, then what is in flight, then the thread ends. */
  stop(): Promise<void>;
}

const sameReadiness = (a: QueueReadiness, b: QueueReadiness) => a.ready === b.ready && a.reason === b.reason;

/**
 * Capture runs on a worker thread of its own, so the SDKs' requests take nothing from the main thread
 * (PGlite, chDB) and the process uses a second core. Its events go through `publisher` on the main
 * thread, and its publish resolves when that one did, so a 200 still means stored. An error that
 * ends the thread ends the process.
 */
export async function startCaptureThread(options: CaptureThreadOptions): Promise<CaptureThread> {
  const { publisher, logger } = options;
  let queueReadiness = publisher.ready();
  const data: CaptureThreadData = {
    config: options.config,
    logLevel: options.logLevel,
    databaseUrl: options.databaseUrl,
    queue: queueReadiness,
  };
  // .ts under npm start's transpiler, .js in the image.
  const worker = new Worker(path.join(__dirname, `capture-thread.worker${path.extname(__filename)}`), {
    workerData: data,
  });
  const post = (message: ToCaptureThread) => worker.postMessage(message);

  const questions = new Map<number, (answer: Extract<FromCaptureThread, { type: 'answer' }>) => void>();
  let nextQuestion = 0;
  let stopping: Promise<void> | undefined;
  let started: { resolve: (url: string) => void; reject: (error: Error) => void } | undefined;
  let stopped: (() => void) | undefined;
  const listening = new Promise<string>((resolve, reject) => {
    started = { resolve, reject };
  });

  const readinessPoll = setInterval(() => {
    const now = publisher.ready();
    if (sameReadiness(now, queueReadiness)) return;
    queueReadiness = now;
    post({ type: 'queue-ready', readiness: now });
  }, QUEUE_READINESS_POLL_MS);
  readinessPoll.unref();

  const fail = (error: Error) => {
    if (started) {
      started.reject(error);
      return;
    }
    logger.fatal({ err: error }, 'the capture thread failed');
    // Not a throw: runMain's last line of defence logs those and keeps the process running.
    setImmediate(() => process.exit(1));
  };
  worker.on('error', fail);
  worker.on('exit', (code) => {
    clearInterval(readinessPoll);
    if (stopping) stopped?.();
    else fail(new Error(`the capture thread exited (code ${code}) without being stopped`));
  });
  worker.on('message', (message: FromCaptureThread) => {
    switch (message.type) {
      case 'listening':
        started?.resolve(message.url);
        started = undefined;
        break;
      case 'publish':
        publisher.publish(message.topic, message.messages).then(
          () => post({ type: 'published', id: message.id }),
          (error: unknown) => post({ type: 'published', id: message.id, failure: toPublishFailure(error) }),
        );
        break;
      case 'answer':
        questions.get(message.id)?.(message);
        questions.delete(message.id);
        break;
      case 'stopped':
        // Its server, pool and port are closed: nothing of it is left to wait for.
        void worker.terminate();
        break;
    }
  });

  const ask = (question: 'ready' | 'metrics') =>
    new Promise<Extract<FromCaptureThread, { type: 'answer' }>>((resolve, reject) => {
      const id = nextQuestion++;
      const timer = setTimeout(() => {
        questions.delete(id);
        reject(new Error(`the capture thread did not answer within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      questions.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.error !== undefined) reject(new Error(answer.error));
        else resolve(answer);
      });
      post({ type: 'ask', id, question });
    });

  const url = await listening;
  return {
    url,
    async ready() {
      const { readiness } = await ask('ready');
      if (!readiness) throw new Error('the capture thread gave no readiness');
      return readiness;
    },
    metrics: {
      async metrics() {
        const { metrics } = await ask('metrics');
        return metrics ?? '';
      },
    },
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        stopped = resolve;
        post({ type: 'stop' });
      });
      return stopping;
    },
  };
}
