import { createRequire } from 'node:module';
import { PATCHED_KAFKAJS_VERSION, patchKafkaJsRequestQueue } from './kafkajs-request-queue.patch';

const load = createRequire(__filename);

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  destroy(): void;
}

function requestQueue(): RequestQueue {
  const RequestQueueClass = load('kafkajs/src/network/requestQueue') as new (options: object) => RequestQueue;
  const quiet = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  };
  return new RequestQueueClass({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: '127.0.0.1:9092',
    logger: quiet,
  });
}

describe('patchKafkaJsRequestQueue', () => {
  beforeAll(() => {
    patchKafkaJsRequestQueue();
  });

  it('applies to the installed kafkajs (a new release needs the fix checked again)', () => {
    expect((load('kafkajs/package.json') as { version: string }).version).toBe(PATCHED_KAFKAJS_VERSION);
    expect(patchKafkaJsRequestQueue()).toBe(true);
  });

  it('leaves an idle queue without a timer (kafkajs armed one at minus the epoch: TimeoutNegativeWarning, a 1 ms loop)', () => {
    const queue = requestQueue();
    // What runs after every broker response.
    queue.checkPendingRequests();
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('still checks again later when requests wait or a throttle ends later', () => {
    const waiting = requestQueue();
    waiting.pending.push({});
    waiting.scheduleCheckPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();
    waiting.destroy();

    const throttled = requestQueue();
    throttled.throttledUntil = Date.now() + 5_000;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
    throttled.destroy();
  });
});
