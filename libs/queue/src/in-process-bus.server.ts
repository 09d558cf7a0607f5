import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC, type QueueMessage } from '@hogbase/event-contract';
import { QueueUnavailableError } from './queue.errors';
import { silentLogger, type QueueLogger } from './queue-logger.util';
import type { IngestionProgress } from './ingestion-progress.client';
import type {
  BatchHandler,
  ConsumedMessage,
  DecodingBatchHandler,
  EventConsumer,
  EventPublisher,
  QueueReadiness,
} from './queue.types';

export interface InProcessBusOptions {
  topics?: readonly string[];
  /** A chDB insert costs mostly per insert: the more one call carries, the less each event costs. */
  maxBatchSize?: number;
  maxQueuedMessages?: number;
  logger?: QueueLogger;
  /** For the topics nothing consumes in-process (dead letters). Default: logged at warn, headers and all. */
  onOtherTopic?: (topic: string, messages: QueueMessage[]) => void | Promise<void>;
}

/** How long after receiving an event capture may still be publishing it (parsing a large body). */
const PUBLISH_BOUND_MS = 5_000;

/** Messages decoded per turn of the event loop while a handler call waits. */
const DECODE_SLICE = 100;

interface PendingPublish {
  remainingSegments: number;
  settled: boolean;
  startedAt: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

interface WaitingCall {
  ended: boolean;
  wake?: () => void;
}

interface Segment {
  topic: string;
  messages: ConsumedMessage[];
  publish: PendingPublish;
  decoded: unknown[];
}

/** Publisher and consumer in one process (`npm start`); libs/queue/README.md says how it batches. */
export class InProcessBus implements EventPublisher, EventConsumer, IngestionProgress {
  private readonly topics: ReadonlySet<string>;
  private readonly maxBatchSize: number;
  private readonly maxQueuedMessages: number;
  private readonly logger: QueueLogger;
  private readonly onOtherTopic: (topic: string, messages: QueueMessage[]) => void | Promise<void>;
  private readonly queue: Segment[] = [];
  private readonly nextOffset = new Map<string, bigint>();
  private queuedMessages = 0;
  /** `unknown` is the handler's own Decoded type: what `decode` made goes back to it alone. */
  private handler: DecodingBatchHandler<unknown> | undefined;
  private waitingCall: WaitingCall | undefined;
  private accepting = true;
  private draining: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly otherTopicPublishes = new Set<Promise<void>>();
  private readonly unsettled = new Set<PendingPublish>();

  constructor(options: InProcessBusOptions = {}) {
    this.topics = new Set(options.topics ?? [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC]);
    this.maxBatchSize = options.maxBatchSize ?? 5_000;
    this.maxQueuedMessages = options.maxQueuedMessages ?? 100_000;
    if (this.maxBatchSize < 1) throw new Error('maxBatchSize must be at least 1');
    this.logger = options.logger ?? silentLogger;
    this.onOtherTopic = options.onOtherTopic ?? ((topic, messages) => this.logUnconsumed(topic, messages));
  }

  publish(topic: string, messages: QueueMessage[]): Promise<void> {
    if (!this.accepting) return Promise.reject(new QueueUnavailableError('the in-process bus is stopped'));
    if (messages.length === 0) return Promise.resolve();
    if (!this.topics.has(topic)) return this.publishToOtherTopic(topic, messages);
    if (!this.handler) {
      return Promise.reject(new QueueUnavailableError('no consumer is running on the in-process bus'));
    }
    if (this.queuedMessages > 0 && this.queuedMessages + messages.length > this.maxQueuedMessages) {
      return Promise.reject(
        new QueueUnavailableError(`the in-process bus has ${this.queuedMessages} messages waiting`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const segmentCount = Math.ceil(messages.length / this.maxBatchSize);
      const publish: PendingPublish = {
        remainingSegments: segmentCount,
        settled: false,
        startedAt: Date.now(),
        resolve: () => {
          this.unsettled.delete(publish);
          resolve();
        },
        reject: (error) => {
          this.unsettled.delete(publish);
          reject(error);
        },
      };
      this.unsettled.add(publish);
      let offset = this.nextOffset.get(topic) ?? 0n;
      for (let start = 0; start < messages.length; start += this.maxBatchSize) {
        const consumed: ConsumedMessage[] = [];
        for (const message of messages.slice(start, start + this.maxBatchSize)) {
          consumed.push({
            key: message.key,
            value: message.value,
            headers: { ...message.headers },
            offset: String(offset),
          });
          offset += 1n;
        }
        this.queue.push({ topic, messages: consumed, publish, decoded: [] });
      }
      this.nextOffset.set(topic, offset);
      this.queuedMessages += messages.length;
      this.waitingCall?.wake?.();
      this.drain();
    });
  }

  start(handler: BatchHandler): Promise<void> {
    return this.startDecoding({ decode: () => undefined, handle: handler });
  }

  startDecoding<Decoded>(handler: DecodingBatchHandler<Decoded>): Promise<void> {
    if (this.handler) return Promise.reject(new Error('the in-process bus already has a consumer'));
    if (!this.accepting) return Promise.reject(new Error('the in-process bus is stopped'));
    this.handler = handler;
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.accepting = false;
      await this.draining;
      await Promise.allSettled([...this.otherTopicPublishes]);
    })();
    return this.closing;
  }

  async stop(): Promise<void> {
    await this.close();
    this.handler = undefined;
  }

  /** Only unsettled publishes count: a rejected one is retried by its SDK as a new capture. */
  processedUntil(time: Date): Promise<true | string> {
    const bound = time.getTime() + PUBLISH_BOUND_MS;
    if (Date.now() < bound) {
      return Promise.resolve(
        `events captured before ${time.toISOString()} may be published until ${new Date(bound).toISOString()}`,
      );
    }
    for (const publish of this.unsettled) {
      if (publish.startedAt < bound) {
        return Promise.resolve(`ingestion is still processing events captured before ${time.toISOString()}`);
      }
    }
    return Promise.resolve(true);
  }

  healthy(): boolean {
    return this.handler !== undefined && this.accepting;
  }

  ready(): QueueReadiness {
    if (!this.accepting) return { ready: false, reason: 'the in-process bus is stopped' };
    if (!this.handler) return { ready: false, reason: 'no consumer is running on the in-process bus' };
    return { ready: true };
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = this.processQueue()
      .catch((error: unknown) => this.logger.error({ err: error }, 'in-process bus loop failed'))
      .finally(() => {
        this.draining = undefined;
        // A publish may have landed between the loop's last check and now.
        if (this.queue.length > 0 && this.handler) this.drain();
      });
  }

  private async processQueue(): Promise<void> {
    // Let publishes issued in the same tick join the first batch.
    await Promise.resolve();
    for (;;) {
      const handler = this.handler;
      if (!handler || this.queue.length === 0) return;
      const segments = this.takeBatch();
      const topics = [...new Set(segments.map((segment) => segment.topic))];
      for (const topic of topics) {
        await this.deliver(
          handler,
          topic,
          segments.filter((segment) => segment.topic === topic),
        );
      }
    }
  }

  private takeBatch(): Segment[] {
    const batch: Segment[] = [];
    let size = 0;
    while (this.queue.length > 0 && size + this.queue[0].messages.length <= this.maxBatchSize) {
      const segment = this.queue.shift()!;
      this.queuedMessages -= segment.messages.length;
      if (segment.publish.settled) continue; // its publish already failed: do not write the rest
      batch.push(segment);
      size += segment.messages.length;
    }
    return batch;
  }

  private async decodeQueued(call: WaitingCall, handler: DecodingBatchHandler<unknown>): Promise<void> {
    for (;;) {
      // The waiting call first: it may still have synchronous work before it really waits.
      await new Promise((resolve) => setImmediate(resolve));
      if (call.ended) return;
      let budget = DECODE_SLICE;
      for (const segment of this.queue) {
        for (; segment.decoded.length < segment.messages.length && budget > 0; budget -= 1) {
          segment.decoded.push(handler.decode(segment.messages[segment.decoded.length]));
        }
        if (budget === 0) break;
      }
      if (budget > 0) {
        await new Promise<void>((resolve) => (call.wake = resolve));
        call.wake = undefined;
      }
    }
  }

  private async deliver(
    handler: DecodingBatchHandler<unknown>,
    topic: string,
    segments: Segment[],
  ): Promise<void> {
    const messages: ConsumedMessage[] = [];
    for (const segment of segments) {
      for (const message of segment.messages) messages.push(message);
    }
    const decoded = () => {
      const values: unknown[] = [];
      for (const segment of segments) {
        segment.messages.forEach((message, index) =>
          values.push(index < segment.decoded.length ? segment.decoded[index] : handler.decode(message)),
        );
      }
      return values;
    };
    const call: WaitingCall = { ended: false };
    let decoding: Promise<void> | undefined;
    const waiting = () => {
      this.waitingCall = call;
      decoding ??= this.decodeQueued(call, handler).catch((error: unknown) =>
        this.logger.error({ err: error }, 'decoding queued messages failed'),
      );
    };
    try {
      await handler.handle({ topic, partition: 0, messages, decoded, waiting });
    } catch (error) {
      this.logger.warn(
        {
          err: error,
          topic,
          size: messages.length,
          publishes: new Set(segments.map((segment) => segment.publish)).size,
        },
        'in-process batch handler failed; its publishes are rejected',
      );
      const failure = new QueueUnavailableError('the in-process consumer could not process the batch', {
        cause: error,
      });
      for (const { publish } of segments) {
        if (publish.settled) continue;
        publish.settled = true;
        publish.reject(failure);
      }
      return;
    } finally {
      call.ended = true;
      call.wake?.();
      if (this.waitingCall === call) this.waitingCall = undefined;
      await decoding;
    }
    for (const { publish } of segments) {
      publish.remainingSegments -= 1;
      if (publish.remainingSegments === 0 && !publish.settled) {
        publish.settled = true;
        publish.resolve();
      }
    }
  }

  private publishToOtherTopic(topic: string, messages: QueueMessage[]): Promise<void> {
    const publishing = Promise.resolve().then(() => this.onOtherTopic(topic, messages));
    this.otherTopicPublishes.add(publishing);
    return publishing.finally(() => this.otherTopicPublishes.delete(publishing));
  }

  private logUnconsumed(topic: string, messages: QueueMessage[]): void {
    for (const message of messages) {
      this.logger.warn(
        { topic, key: message.key, headers: message.headers },
        'message published to a topic nothing consumes in-process',
      );
    }
  }
}
