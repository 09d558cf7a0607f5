import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { createCapturePool, startCaptureService } from '@hogbase/capture-server';
import type { CaptureThreadData, FromCaptureThread, ToCaptureThread } from './capture-thread.protocol';
import { PortPublisher } from './port.publisher';

async function runCaptureThread(
  port: NonNullable<typeof parentPort>,
  data: CaptureThreadData,
): Promise<void> {
  const send = (message: FromCaptureThread) => port.postMessage(message);
  const logger = pino({ level: data.logLevel });
  const publisher = new PortPublisher(port, data.queue);
  const pool = createCapturePool(data.databaseUrl, logger, data.config.databasePoolSize);
  const capture = await startCaptureService(data.config, { publisher, pool, logger });

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    await capture.stop();
    await publisher.close();
    await pool.end();
    send({ type: 'stopped' });
    port.close();
  };
  port.on('message', (message: ToCaptureThread) => {
    switch (message.type) {
      case 'published':
        publisher.settle(message.id, message.failure);
        break;
      case 'queue-ready':
        publisher.setReadiness(message.readiness);
        break;
      case 'ask': {
        const answer =
          message.question === 'ready'
            ? capture.ready().then((readiness) => ({ readiness }))
            : capture.metrics.metrics().then((metrics) => ({ metrics }));
        answer.then(
          (fields) => send({ type: 'answer', id: message.id, ...fields }),
          (error: unknown) => send({ type: 'answer', id: message.id, error: String(error) }),
        );
        break;
      }
      case 'stop':
        stopping ??= stop();
        break;
    }
  });
  send({ type: 'listening', url: capture.url });
}

if (!parentPort)
  throw new Error('capture-thread.worker runs as a worker thread (capture-thread.launcher.ts)');
// A failure is an unhandled rejection: it ends the thread, and the main thread's 'error' handler gets it.
void runCaptureThread(parentPort, workerData as CaptureThreadData);
