import type { Consumer, EachBatchPayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { createKafkaClient, toQueueError, type KafkaClientOptions } from './kafka-client.util';
import { silentLogger, type QueueLogger } from './queue-logger.util';
import type { BatchHandler, ConsumedMessage, EventConsumer } from './queue.types';

export interface KafkaConsumerOptions extends KafkaClientOptions {
  groupId: string;
  topics: readonly string[];
  /** Where a group without committed offsets starts. Default true: nothing published before the first start is skipped. */
  fromBeginning?: boolean;
  /** Most messages per handler call (a larger fetched batch is split, committing after each part). Default 1,000. */
  maxBatchSize?: number;
  /** Partitions processed at the same time by this consumer (each one still in order). Default 1. */
  partitionsConsumedConcurrently?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** Bytes fetched per partition per request (kafkajs default 1 MiB). */
  maxBytesPerPartition?: number;
  /** How long an empty fetch waits on the broker; also bounds how long stop() waits for it. Default 1 s. */
  maxWaitTimeMs?: number;
  /** Back-off between retries of a failing batch: doubles from `retryInitialMs` up to `retryMaxMs`. */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

function headerText(value: IHeaders[string]): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

function toConsumedMessage(message: KafkaMessage): ConsumedMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  return {
    key: message.key ? message.key.toString() : null,
    value: message.value ? message.value.toString() : '',
    headers,
    offset: message.offset,
  };
}

/**
 * Consumes with kafkajs `eachBatch`, one partition's batches in order, and commits a batch's
 * offsets only after the handler resolved (at-least-once).
 *
 * TRICKY: a handler that throws is a transient failure (Postgres or ClickHouse down). The same
 * messages are retried in place with back-off, heartbeating so the group keeps the partition,
 * and nothing is committed meanwhile. The loop ends on success, on stop() (the messages stay
 * uncommitted and the next start reads them again) or when a rebalance takes the partition away
 * (the new owner reads them again). Messages that can never succeed must be dead-lettered by the
 * handler, which then resolves; a throw is never a way to skip a message.
 */
export class KafkaEventConsumer implements EventConsumer {
  private readonly kafka: Kafka;
  private readonly logger: QueueLogger;
  private readonly maxBatchSize: number;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private consumer: Consumer | undefined;
  private handler: BatchHandler | undefined;
  private stopping: Promise<void> | undefined;
  private crashed: Error | undefined;
  private restarting = false;
  /** Wakes the back-off sleeps when stop() is called. */
  private readonly stopSignal = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: KafkaConsumerOptions) {
    this.kafka = createKafkaClient(options);
    this.logger = options.logger ?? silentLogger;
    this.maxBatchSize = options.maxBatchSize ?? 1_000;
    this.retryInitialMs = options.retryInitialMs ?? 200;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
  }

  async start(handler: BatchHandler): Promise<void> {
    if (this.consumer) throw new Error('the Kafka consumer is already started');
    this.handler = handler;
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: this.options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: this.options.heartbeatIntervalMs ?? 3_000,
      maxBytesPerPartition: this.options.maxBytesPerPartition,
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 1_000,
      retry: { initialRetryTime: 200, maxRetryTime: 5_000, retries: 8, multiplier: 2 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, (event) => {
      // kafkajs restarts the consumer itself after a retriable crash (unhealthy until it has
      // rejoined the group); a crash without restart is final.
      if (event.payload.restart) this.restarting = true;
      else this.crashed = event.payload.error;
    });
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.restarting = false;
    });
    try {
      await consumer.connect();
      await consumer.subscribe({
        topics: [...this.options.topics],
        fromBeginning: this.options.fromBeginning ?? true,
      });
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: true,
        // commitOffsetsIfNecessary() commits as soon as one offset is resolved (after every handler call).
        autoCommitThreshold: 1,
        partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
        eachBatch: (payload) => this.track(this.onBatch(payload)),
      });
    } catch (error) {
      this.consumer = undefined;
      await consumer.disconnect().catch(() => undefined);
      throw toQueueError(error, `cannot start consuming ${this.options.topics.join(', ')}`);
    }
  }

  stop(): Promise<void> {
    const consumer = this.consumer;
    if (!consumer) return Promise.resolve();
    this.stopping ??= (async () => {
      this.stopSignal.abort();
      // kafkajs stops fetching, waits for the batch in flight (which commits what it processed)
      // and leaves the group; the wait on inFlight guards the commit in any case.
      await consumer.stop();
      await Promise.allSettled([...this.inFlight]);
      await consumer.disconnect();
    })();
    return this.stopping;
  }

  healthy(): boolean {
    return (
      this.consumer !== undefined &&
      this.stopping === undefined &&
      this.crashed === undefined &&
      !this.restarting
    );
  }

  private track(processing: Promise<void>): Promise<void> {
    this.inFlight.add(processing);
    return processing.finally(() => this.inFlight.delete(processing));
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const messages = batch.messages.map(toConsumedMessage);
    for (let start = 0; start < messages.length; start += this.maxBatchSize) {
      if (!payload.isRunning() || payload.isStale()) return;
      const part = messages.slice(start, start + this.maxBatchSize);
      if (!(await this.handleWithRetry(payload, part))) return;
      // Offsets move only here, after the handler resolved, in partition order.
      payload.resolveOffset(part[part.length - 1].offset);
      await payload.commitOffsetsIfNecessary();
      await payload.heartbeat();
    }
  }

  /** True once the handler resolved; false when stopped or rebalanced before it did. */
  private async handleWithRetry(payload: EachBatchPayload, messages: ConsumedMessage[]): Promise<boolean> {
    const { topic, partition } = payload.batch;
    const handler = this.handler;
    if (!handler) return false;
    for (let attempt = 1; ; attempt++) {
      try {
        await handler({ topic, partition, messages });
        return true;
      } catch (error) {
        const delayMs = Math.min(this.retryInitialMs * 2 ** (attempt - 1), this.retryMaxMs);
        this.logger.warn(
          {
            err: error,
            topic,
            partition,
            firstOffset: messages[0].offset,
            size: messages.length,
            attempt,
            delayMs,
          },
          'batch handler failed; retrying the same messages, nothing committed',
        );
        if (!(await this.sleep(delayMs))) return false;
        if (!payload.isRunning() || payload.isStale()) return false;
        // Keeps the group membership while we wait; throws when the group rebalances, which ends
        // this batch uncommitted.
        await payload.heartbeat();
      }
    }
  }

  /** Resolves true after `ms`, or false at once when stop() is called. */
  private sleep(ms: number): Promise<boolean> {
    const signal = this.stopSignal.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
