import { type MessageToProduce, ProduceAcks, Producer, stringSerializers } from '@platformatic/kafka';
import { queueMessageBytes, type QueueMessage } from '@hogbase/event-contract';
import { backoffMs, settlesWithin, sleep } from './deadline.util';
import type { KafkaClientOptions } from './kafka-client.util';
import { keyHash } from './murmur2.util';
import { platformaticQueueError } from './platformatic-errors.util';
import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';
import { silentLogger, type QueueLogger } from './queue-logger.util';
import type { EventPublisher, QueueReadiness } from './queue.types';

export interface KafkaPublisherOptions extends KafkaClientOptions {
  /** One publish, connecting, retries and the ack wait included. */
  timeoutMs?: number;
  /** Largest message, refused before anything is sent; at most the broker's `message.max.bytes`. */
  maxMessageBytes?: number;
  idempotent?: boolean;
  compression?: 'none' | 'gzip';
  /** How long close() waits for the publishes in flight, then up to 2 s more to disconnect. */
  closeTimeoutMs?: number;
  /** Publishes arriving while this many produce requests are out go together in the next one. */
  maxInFlightRequests?: number;
  maxBatchBytes?: number;
}

interface Chunk {
  messages: OutgoingMessage[];
  bytes: number;
}

interface Batch {
  messages: OutgoingMessage[];
  bytes: number;
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
}

const DISCONNECT_TIMEOUT_MS = 2_000;
const PROBE_INITIAL_MS = 500;
const PROBE_MAX_MS = 5_000;
const CLIENT_RETRIES = 3;
const CLIENT_RETRY_DELAY_MS = 250;

type Availability = 'unknown' | 'available' | 'unavailable';
type OutgoingMessage = MessageToProduce<string, string, string, string>;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Kafka's default (Java murmur2): a key lands where every other producer of the topic puts it. */
function partitionOf(_message: OutgoingMessage, key: Buffer | undefined): number {
  return key ? keyHash(key) : 0;
}

/**
 * A publish that times out may still be written later: the SDK's retry is deduplicated by the events
 * table (so no idempotent producer, whose dedup spans one session). Readiness recovers by a probe.
 */
export class KafkaEventPublisher implements EventPublisher {
  private readonly producer: Producer<string, string, string, string>;
  private readonly timeoutMs: number;
  readonly maxMessageBytes: number;
  private readonly closeTimeoutMs: number;
  private readonly logger: QueueLogger;
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly closeSignal = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  private availability: Availability = 'unknown';
  private unavailableReason: string | undefined;
  private probing: Promise<void> | undefined;
  private readonly maxInFlightRequests: number;
  private readonly maxBatchBytes: number;
  private requestsInFlight = 0;
  /** Oldest first; the last one still takes publishes. */
  private readonly waiting: Batch[] = [];

  constructor(options: KafkaPublisherOptions) {
    if (options.brokers.length === 0) throw new Error('Kafka needs at least one broker (host:port)');
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.maxMessageBytes = options.maxMessageBytes ?? 1_000_000;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
    this.logger = options.logger ?? silentLogger;
    this.maxInFlightRequests = options.maxInFlightRequests ?? 5;
    this.maxBatchBytes = Math.min(options.maxBatchBytes ?? 256 * 1024, this.maxMessageBytes);
    this.producer = new Producer({
      clientId: options.clientId ?? 'hogbase',
      bootstrapBrokers: [...options.brokers],
      serializers: stringSerializers,
      acks: ProduceAcks.ALL,
      compression: options.compression ?? 'none',
      idempotent: options.idempotent ?? false,
      partitioner: partitionOf,
      autocreateTopics: false,
      connectTimeout: options.connectionTimeoutMs ?? 3_000,
      // A broker that does not answer must not hold a request past the publish deadline.
      timeout: options.requestTimeoutMs ?? this.timeoutMs,
      retries: CLIENT_RETRIES,
      retryDelay: CLIENT_RETRY_DELAY_MS,
      maxInflights: this.maxInFlightRequests,
    });
  }

  async connect(): Promise<void> {
    if (this.closing) throw new QueueUnavailableError('the Kafka publisher is closed');
    this.connecting ??= this.producer.metadata({ topics: [] }).then(
      () => this.markAvailable(),
      (error: unknown) => {
        this.connecting = undefined;
        const mapped = platformaticQueueError(error, 'cannot connect to Kafka');
        this.markUnavailable(mapped);
        throw mapped;
      },
    );
    return this.connecting;
  }

  ready(): QueueReadiness {
    if (this.closing) return { ready: false, reason: 'the Kafka publisher is closed' };
    switch (this.availability) {
      case 'available':
        return { ready: true };
      case 'unavailable':
        return { ready: false, reason: `Kafka is unavailable: ${this.unavailableReason ?? 'unknown error'}` };
      case 'unknown':
        this.connect().catch(() => undefined);
        return { ready: false, reason: 'connecting to Kafka' };
    }
  }

  async publish(topic: string, messages: QueueMessage[]): Promise<void> {
    if (this.closing) throw new QueueUnavailableError('the Kafka publisher is closed');
    if (messages.length === 0) return;
    const publishing = this.publishWithinDeadline(topic, this.chunk(topic, messages), messages.length);
    this.inFlight.add(publishing);
    try {
      await publishing;
      this.markAvailable();
    } catch (error) {
      if (error instanceof QueueUnavailableError) this.markUnavailable(error);
      throw error;
    } finally {
      this.inFlight.delete(publishing);
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closeSignal.abort();
      const drained = await settlesWithin(Promise.allSettled([...this.inFlight]), this.closeTimeoutMs);
      // force: requests still waiting for a broker that does not answer are failed, not awaited.
      const disconnected = await settlesWithin(
        this.producer.close(!drained).catch(() => undefined),
        DISCONNECT_TIMEOUT_MS,
      );
      if (!drained || !disconnected) {
        this.logger.warn(
          { inFlight: this.inFlight.size, closeTimeoutMs: this.closeTimeoutMs },
          'Kafka publisher closed without the broker acknowledging everything; those publishes failed',
        );
      }
    })();
    return this.closing;
  }

  private markAvailable(): void {
    const previous = this.availability;
    this.availability = 'available';
    this.unavailableReason = undefined;
    if (previous === 'unavailable') this.logger.info({}, 'Kafka available again: publishing');
  }

  private markUnavailable(error: unknown): void {
    if (this.closing) return;
    const previous = this.availability;
    this.availability = 'unavailable';
    this.unavailableReason = messageOf(error);
    if (previous !== 'unavailable') {
      this.logger.warn(
        { reason: this.unavailableReason },
        'Kafka unavailable: publishes fail (503) until it answers again',
      );
    }
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
    });
  }

  private async probe(): Promise<void> {
    for (let attempt = 1; this.availability === 'unavailable'; attempt++) {
      if (!(await sleep(backoffMs(attempt, PROBE_INITIAL_MS, PROBE_MAX_MS), this.closeSignal.signal))) return;
      if (this.availability !== 'unavailable') return;
      try {
        await this.producer.metadata({ topics: [], forceUpdate: true });
        if (!this.closing) this.markAvailable();
      } catch (error) {
        this.unavailableReason = messageOf(platformaticQueueError(error, 'Kafka does not answer'));
      }
    }
  }

  /** Settles by the deadline: the send may go on (client retries) but nobody waits for it. */
  private async publishWithinDeadline(topic: string, chunks: Chunk[], count: number): Promise<void> {
    const sending = this.send(topic, chunks);
    sending.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new QueueUnavailableError(
              `Kafka did not acknowledge ${count} message(s) to ${topic} within ${this.timeoutMs} ms`,
            ),
          ),
        this.timeoutMs,
      );
    });
    try {
      await Promise.race([sending, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(topic: string, chunks: Chunk[]): Promise<void> {
    // One chunk after the other: a key's messages keep their order.
    for (const chunk of chunks) {
      try {
        await this.enqueue(chunk);
      } catch (error) {
        throw platformaticQueueError(error, `cannot publish to ${topic}`);
      }
    }
  }

  /** Under load, publishes share requests without a fixed linger; alone, one goes out at once. */
  private enqueue({ messages, bytes }: Chunk): Promise<void> {
    return new Promise((resolve, reject) => {
      let batch = this.waiting.at(-1);
      if (!batch || (batch.messages.length > 0 && batch.bytes + bytes > this.maxBatchBytes)) {
        batch = { messages: [], bytes: 0, waiters: [] };
        this.waiting.push(batch);
      }
      for (const message of messages) batch.messages.push(message);
      batch.bytes += bytes;
      batch.waiters.push({ resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.requestsInFlight < this.maxInFlightRequests && this.waiting.length > 0) {
      const batch = this.waiting.shift() as Batch;
      this.requestsInFlight += 1;
      this.producer
        .send({ messages: batch.messages })
        .then(
          () => {
            for (const waiter of batch.waiters) waiter.resolve();
          },
          (error: unknown) => {
            for (const waiter of batch.waiters) waiter.reject(error);
          },
        )
        .finally(() => {
          this.requestsInFlight -= 1;
          this.pump();
        });
    }
  }

  private chunk(topic: string, messages: QueueMessage[]): Chunk[] {
    const chunks: Chunk[] = [];
    let current: OutgoingMessage[] = [];
    let currentBytes = 0;
    for (const message of messages) {
      const bytes = queueMessageBytes(message);
      if (bytes > this.maxMessageBytes) {
        throw new MessageTooLargeError(
          `a message of ${bytes} bytes exceeds the limit of ${this.maxMessageBytes} bytes`,
          this.maxMessageBytes,
        );
      }
      if (current.length > 0 && currentBytes + bytes > this.maxMessageBytes) {
        chunks.push({ messages: current, bytes: currentBytes });
        current = [];
        currentBytes = 0;
      }
      current.push({ topic, key: message.key, value: message.value, headers: message.headers });
      currentBytes += bytes;
    }
    if (current.length > 0) chunks.push({ messages: current, bytes: currentBytes });
    return chunks;
  }
}
