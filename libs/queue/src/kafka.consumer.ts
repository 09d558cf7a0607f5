import type {
  Consumer,
  ConsumerCrashEvent,
  ConsumerGroupJoinEvent,
  EachBatchPayload,
  IHeaders,
  Kafka,
  KafkaMessage,
  RetryOptions,
} from 'kafkajs';
import { backoffMs, settlesWithin, sleep } from './deadline.util';
import { createKafkaClient, isKafkaConfigurationError, type KafkaClientOptions } from './kafka-client.util';
import { KafkaConsumerState, type KafkaConsumerStatus } from './kafka-consumer-status.util';
import { QueueUnavailableError } from './queue.errors';
import { silentLogger, type KafkaLogEntry, type QueueLogger } from './queue-logger.util';
import { decodingInCall } from './decoded-batch.util';
import type {
  BatchHandler,
  ConsumedMessage,
  DecodingBatchHandler,
  EventConsumer,
  QueueReadiness,
} from './queue.types';

export interface KafkaConsumerOptions extends KafkaClientOptions {
  groupId: string;
  topics: readonly string[];
  /** Default true: nothing published before the first start is skipped. */
  fromBeginning?: boolean;
  /** A larger fetched batch is split, committing after each part. */
  maxBatchSize?: number;
  partitionsConsumedConcurrently?: number;
  /** How long a silent member (killed, cut off) keeps its partitions; a clean stop leaves at once. */
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** A member still busy after this is dropped; its uncommitted batch goes to the new owner. */
  rebalanceTimeoutMs?: number;
  maxBytesPerPartition?: number;
  maxBytes?: number;
  maxWaitTimeMs?: number;
  /** A failed partition's back-off doubles up to `retryMaxMs`, never shorter than the failed attempt. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  reconnectMaxMs?: number;
  /** Attempts of one operation before kafkajs restarts the consumer as a new member. */
  reconnectAttempts?: number;
  stopTimeoutMs?: number;
}

export type { KafkaConsumerStatus } from './kafka-consumer-status.util';

const CONNECTION_NAMESPACES = new Set(['Connection', 'BrokerPool', 'Cluster']);

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

function deferred(): { started: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const started = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { started, resolve };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

interface RetryingPartition {
  topic: string;
  partition: number;
  attempts: number;
  timer: NodeJS.Timeout | undefined;
}

/** At-least-once (libs/queue/README.md): a message that can never succeed is dead-lettered, never thrown. */
export class KafkaEventConsumer implements EventConsumer {
  private readonly kafka: Kafka;
  private readonly logger: QueueLogger;
  private readonly maxBatchSize: number;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private readonly reconnectMaxMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly stopTimeoutMs: number;
  private readonly state: KafkaConsumerState;
  private consumer: Consumer | undefined;
  private handler: BatchHandler | undefined;
  private stopping: Promise<void> | undefined;
  private kafkajsStopped: Promise<void> = Promise.resolve();
  private starting: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  private runnerStarting: { started: Promise<void>; resolve: () => void } | undefined;
  private readonly stopSignal = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly retrying = new Map<string, RetryingPartition>();

  constructor(private readonly options: KafkaConsumerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.maxBatchSize = options.maxBatchSize ?? 1_000;
    this.retryInitialMs = options.retryInitialMs ?? 200;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
    this.reconnectMaxMs = options.reconnectMaxMs ?? 5_000;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 1_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 8_000;
    this.state = new KafkaConsumerState(this.logger, options.groupId);
    this.kafka = createKafkaClient(options, {
      retry: this.kafkaRetry(),
      quiet: true,
      onLog: (entry) => this.onKafkaLog(entry),
    });
  }

  get status(): KafkaConsumerStatus {
    return this.state.status;
  }

  assignment(): Record<string, number[]> {
    return this.state.assignment;
  }

  start(handler: BatchHandler): Promise<void> {
    if (this.state.status !== 'idle') return Promise.reject(new Error('a Kafka consumer starts only once'));
    this.handler = handler;
    this.state.starting();
    const started = new Promise<void>((resolve, reject) => {
      this.starting = { resolve, reject };
    });
    this.connectAndRun().catch((error: unknown) => this.fail(error));
    return started;
  }

  startDecoding<Decoded>(handler: DecodingBatchHandler<Decoded>): Promise<void> {
    return this.start(decodingInCall(handler));
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  healthy(): boolean {
    return this.state.alive;
  }

  ready(): QueueReadiness {
    return this.state.readiness();
  }

  private kafkaRetry(): RetryOptions {
    return {
      initialRetryTime: 300,
      maxRetryTime: this.reconnectMaxMs,
      multiplier: 2,
      retries: this.options.reconnectAttempts ?? 30,
      // kafkajs may crash and schedule its restart after our stop() went by: never restart then.
      restartOnFailure: () => Promise.resolve(!this.state.stopRequested),
    };
  }

  private async connectAndRun(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
      rebalanceTimeout: this.options.rebalanceTimeoutMs ?? 20_000,
      heartbeatInterval: this.heartbeatIntervalMs,
      maxBytesPerPartition: this.options.maxBytesPerPartition,
      maxBytes: this.options.maxBytes,
      maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 1_000,
      retry: this.kafkaRetry(),
    });
    this.consumer = consumer;
    this.listen(consumer);
    for (let attempt = 1; ; attempt++) {
      if (this.stopSignal.signal.aborted) return;
      try {
        await consumer.connect();
        await consumer.subscribe({
          topics: [...this.options.topics],
          fromBeginning: this.options.fromBeginning ?? true,
        });
        break;
      } catch (error) {
        if (isKafkaConfigurationError(error)) {
          this.fail(
            new QueueUnavailableError(
              `cannot start consuming ${this.options.topics.join(', ')}: ${messageOf(error)}`,
              { cause: error },
            ),
          );
          await consumer.disconnect().catch(() => undefined);
          return;
        }
        this.state.kafkaUnavailable(messageOf(error));
        await sleep(backoffMs(attempt, 300, this.reconnectMaxMs), this.stopSignal.signal);
      }
    }
    if (this.stopSignal.signal.aborted) return;
    try {
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: true,
        autoCommitThreshold: 1,
        partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
        eachBatch: (payload) => this.track(this.onBatch(payload)),
      });
    } catch (error) {
      this.fail(error);
    }
  }

  private listen(consumer: Consumer): void {
    const { events } = consumer;
    consumer.on(events.GROUP_JOIN, (event: ConsumerGroupJoinEvent) => {
      this.forgetRevoked(event.payload.memberAssignment);
      this.state.joinedGroup(event.payload.memberAssignment);
    });
    // TRICKY: kafkajs emits GROUP_JOIN before its runner counts as running, and a stop() in between is
    // lost (no LeaveGroup, a zombie member fetching on): start() resolves only at the first fetch.
    consumer.on(events.FETCH_START, () => {
      this.runnerStarted();
      if (this.state.joined) {
        this.starting?.resolve();
        this.starting = undefined;
      }
    });
    consumer.on(events.REBALANCING, () => this.state.rebalancing());
    consumer.on(events.CRASH, (event: ConsumerCrashEvent) => {
      this.runnerStarted();
      if (event.payload.restart) this.state.restarting(event.payload.error);
      else if (!this.state.stopRequested) this.fail(event.payload.error);
    });
    consumer.on(events.REQUEST_TIMEOUT, (event) =>
      this.state.kafkaUnavailable(`a request to ${event.payload.broker} timed out`),
    );
    for (const answered of [events.FETCH, events.HEARTBEAT, events.COMMIT_OFFSETS]) {
      consumer.on(answered, () => this.state.kafkaAnswered());
    }
  }

  private onKafkaLog(entry: KafkaLogEntry): void {
    // kafkajs logs this as its runner starts: at run(), and when it restarts after a crash.
    if (entry.namespace === 'Consumer' && entry.message === 'Starting') this.runnerStarting ??= deferred();
    if (entry.level !== 'error' || !CONNECTION_NAMESPACES.has(entry.namespace)) return;
    // "Response <Request>" lines are a broker's error answers: Kafka is reachable.
    if (entry.message.startsWith('Response ')) return;
    this.state.kafkaUnavailable(entry.message);
  }

  private runnerStarted(): void {
    this.runnerStarting?.resolve();
    this.runnerStarting = undefined;
  }

  private fail(error: unknown): void {
    this.state.failed(error);
    this.starting?.reject(error);
    this.starting = undefined;
  }

  private async shutdown(): Promise<void> {
    const consumer = this.consumer;
    this.state.stopping();
    this.stopSignal.abort();
    this.starting?.reject(
      new QueueUnavailableError('the Kafka consumer was stopped before it joined its group'),
    );
    this.starting = undefined;
    for (const retry of this.retrying.values()) clearTimeout(retry.timer);
    this.retrying.clear();
    if (consumer) {
      const deadline = Date.now() + this.stopTimeoutMs;
      // A runner that is joining cannot be stopped (see FETCH_START): let it finish first.
      if (this.runnerStarting) await settlesWithin(this.runnerStarting.started, this.stopTimeoutMs);
      const stopped = (async () => {
        await consumer.stop().catch(() => undefined);
        await Promise.allSettled([...this.inFlight]);
        await consumer.disconnect().catch(() => undefined);
      })();
      this.kafkajsStopped = stopped;
      if (!(await settlesWithin(stopped, deadline - Date.now()))) {
        this.logger.warn(
          { groupId: this.options.groupId, stopTimeoutMs: this.stopTimeoutMs },
          'Kafka consumer did not stop in time; what it did not commit is consumed again by the next owner',
        );
      }
    }
    this.state.stopped();
  }

  /** kafkajs's own stop, which a bounded `stop()` may return before (a broker that does not answer). */
  whenKafkajsStopped(): Promise<void> {
    return this.kafkajsStopped;
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
      if (!(await this.handleOnce(payload, part))) return;
      // Offsets move only here, after the handler resolved, in partition order.
      payload.resolveOffset(part[part.length - 1].offset);
      await payload.commitOffsetsIfNecessary();
      await payload.heartbeat();
    }
  }

  private async handleOnce(payload: EachBatchPayload, messages: ConsumedMessage[]): Promise<boolean> {
    const { topic, partition, highWatermark } = payload.batch;
    const handler = this.handler;
    if (!handler) return false;
    // kafkajs heartbeats only between batches: a long call would get this member dropped.
    const heartbeats = setInterval(() => {
      payload.heartbeat().catch(() => undefined);
    }, this.heartbeatIntervalMs);
    const startedAt = Date.now();
    try {
      await handler({ topic, partition, messages, highWatermark });
      this.partitionSucceeded(topic, partition);
      return true;
    } catch (error) {
      this.retryLater(topic, partition, messages[0].offset, error, Date.now() - startedAt);
      return false;
    } finally {
      clearInterval(heartbeats);
    }
  }

  /**
   * TRICKY: kafkajs fetches again only once every batch of a fetch is done, so a batch retried in place
   * would hold back every other partition: the partition is paused, its offset left unresolved, and
   * fetched again after the back-off. The back-off is at least the failed attempt's duration, so a
   * slow failure (a lock wait) holds the fetch loop at most about half of the time.
   */
  private retryLater(
    topic: string,
    partition: number,
    firstOffset: string,
    error: unknown,
    attemptMs: number,
  ): void {
    const key = partitionKey(topic, partition);
    const retry = this.retrying.get(key) ?? { topic, partition, attempts: 0, timer: undefined };
    retry.attempts += 1;
    this.retrying.set(key, retry);
    const delayMs = Math.max(backoffMs(retry.attempts, this.retryInitialMs, this.retryMaxMs), attemptMs);
    this.state.batchFailed(topic, partition, firstOffset, error);
    this.logger.debug(
      { err: error, topic, partition, firstOffset, attempt: retry.attempts, delayMs },
      'batch handler failed; the partition is paused and fetched again after the back-off, nothing committed',
    );
    if (this.stopSignal.signal.aborted) return;
    this.consumer?.pause([{ topic, partitions: [partition] }]);
    clearTimeout(retry.timer);
    retry.timer = setTimeout(() => {
      retry.timer = undefined;
      this.resume(topic, partition);
    }, delayMs);
  }

  private partitionSucceeded(topic: string, partition: number): void {
    const key = partitionKey(topic, partition);
    const retry = this.retrying.get(key);
    if (retry) {
      clearTimeout(retry.timer);
      this.retrying.delete(key);
    }
    if (this.state.batchSucceeded(topic, partition)) {
      this.logger.debug(
        { topic, partition, attempts: (retry?.attempts ?? 0) + 1 },
        'batch handler succeeded after retries',
      );
    }
  }

  private forgetRevoked(assignment: Record<string, number[]>): void {
    for (const [key, retry] of this.retrying) {
      if (assignment[retry.topic]?.includes(retry.partition)) continue;
      clearTimeout(retry.timer);
      this.retrying.delete(key);
      this.resume(retry.topic, retry.partition);
    }
  }

  private resume(topic: string, partition: number): void {
    try {
      this.consumer?.resume([{ topic, partitions: [partition] }]);
    } catch {
      // kafkajs is restarting its consumer group (a new one has no paused partitions) or stopped.
    }
  }
}
