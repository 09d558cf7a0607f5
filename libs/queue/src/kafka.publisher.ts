import { CompressionTypes, Partitioners, type Admin, type Kafka, type Message, type Producer } from 'kafkajs';
import type { QueueMessage } from '@hogbase/event-contract';
import { backoffMs, settlesWithin, sleep } from './deadline.util';
import { createKafkaClient, toQueueError, type KafkaClientOptions } from './kafka-client.util';
import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';
import { silentLogger, type QueueLogger } from './queue-logger.util';
import type { EventPublisher, QueueReadiness } from './queue.types';

export interface KafkaPublisherOptions extends KafkaClientOptions {
  /**
   * Upper bound on one publish, from the call to the broker's acknowledgement of every message
   * (connecting, retries and the ack wait included). Default 5 s.
   */
  timeoutMs?: number;
  /**
   * Largest message (key, value, headers and record overhead). A larger one is refused with
   * MessageTooLargeError before anything is sent. Keep it at or under the broker's
   * `message.max.bytes` (1 MiB by default). Also the size of one produce request: a bigger publish
   * goes out as several requests, one after the other. Default 1,000,000.
   */
  maxMessageBytes?: number;
  /**
   * kafkajs's idempotent producer. Off by default: kafkajs then serialises every produce request
   * to a broker behind a lock (one request in flight per broker), and a redelivered duplicate is
   * harmless here since the events table deduplicates by UUID.
   */
  idempotent?: boolean;
  compression?: 'none' | 'gzip';
  /**
   * How long close() waits for the publishes in flight (then up to 2 s more to disconnect), even
   * when the broker does not answer. Each of them fails at its own deadline anyway. Default 5 s.
   */
  closeTimeoutMs?: number;
}

/** The bound on disconnecting once the publishes in flight are done (or given up on). */
const DISCONNECT_TIMEOUT_MS = 2_000;
/** Back-off of the readiness probe while Kafka is unavailable. */
const PROBE_INITIAL_MS = 500;
const PROBE_MAX_MS = 5_000;

type Availability = 'unknown' | 'available' | 'unavailable';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Bytes per record beyond key, value and headers (lengths, varints, attributes), rounded up. */
const RECORD_OVERHEAD_BYTES = 64;

function estimateBytes(message: QueueMessage): number {
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(message.key) + Buffer.byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 8;
  }
  return bytes;
}

/**
 * Publishes to Kafka with `acks: -1`: `publish` resolves once every in-sync replica has the
 * messages, so capture may answer 200. Failures become QueueUnavailableError (503) or
 * MessageTooLargeError (413).
 *
 * NOTE: a publish that times out may still be written by the broker later (the request was on its
 * way); the SDK then retries and the duplicate is removed by the events table (dedup by UUID).
 *
 * Readiness: a failed publish makes the publisher not ready, and from then on a probe asks the
 * broker for its metadata with capped back-off until it answers; the publisher is then ready again
 * even if no publish came meanwhile (a not-ready capture gets no traffic to prove recovery with).
 * kafkajs's per-attempt log lines go to debug; each change of availability is logged once here.
 */
export class KafkaEventPublisher implements EventPublisher {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly timeoutMs: number;
  private readonly maxMessageBytes: number;
  private readonly compression: CompressionTypes;
  private readonly closeTimeoutMs: number;
  private readonly logger: QueueLogger;
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly closeSignal = new AbortController();
  /** Publishes whose callers wait, each settling by its deadline. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private availability: Availability = 'unknown';
  private unavailableReason: string | undefined;
  private probing: Promise<void> | undefined;
  private admin: Admin | undefined;

  constructor(options: KafkaPublisherOptions) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.maxMessageBytes = options.maxMessageBytes ?? 1_000_000;
    this.compression = options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
    this.logger = options.logger ?? silentLogger;
    this.kafka = createKafkaClient(
      {
        ...options,
        // A broker that does not answer must not hold a request past the publish deadline.
        requestTimeoutMs: options.requestTimeoutMs ?? this.timeoutMs,
      },
      { quiet: true },
    );
    this.producer = this.kafka.producer({
      // Java-compatible murmur2 (kafkajs's default since 2.0); explicit to silence its warning.
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      idempotent: options.idempotent ?? false,
      // Bounded so a dead broker gives up inside the publish deadline (about 2.5 s of retrying).
      retry: { initialRetryTime: 100, maxRetryTime: 1_000, retries: 5, multiplier: 2 },
    });
  }

  /** Connects now (start-up); publish connects by itself when needed. */
  async connect(): Promise<void> {
    if (this.closing) throw new QueueUnavailableError('the Kafka publisher is closed');
    this.connecting ??= this.producer.connect().then(
      () => this.markAvailable(),
      (error: unknown) => {
        // Forget the failed attempt so that the next publish tries again.
        this.connecting = undefined;
        const mapped = toQueueError(error, 'cannot connect to Kafka');
        this.markUnavailable(mapped);
        throw mapped;
      },
    );
    return this.connecting;
  }

  /** Ready once connected and while publishes succeed (see the class comment). No I/O of its own. */
  ready(): QueueReadiness {
    if (this.closing) return { ready: false, reason: 'the Kafka publisher is closed' };
    switch (this.availability) {
      case 'available':
        return { ready: true };
      case 'unavailable':
        return { ready: false, reason: `Kafka is unavailable: ${this.unavailableReason ?? 'unknown error'}` };
      case 'unknown':
        // Nothing tried yet: find out, so that the next probe knows.
        this.connect().catch(() => undefined);
        return { ready: false, reason: 'connecting to Kafka' };
    }
  }

  async publish(topic: string, messages: QueueMessage[]): Promise<void> {
    if (this.closing) throw new QueueUnavailableError('the Kafka publisher is closed');
    if (messages.length === 0) return;
    const publishing = this.publishWithinDeadline(topic, this.chunk(messages), messages.length);
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

  /**
   * Stops taking publishes, lets those in flight finish, disconnects; bounded by closeTimeoutMs
   * plus 2 s. A publish still unacknowledged then has failed or fails at its own deadline: its
   * caller answers 503, never 200.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closeSignal.abort();
      const drained = await settlesWithin(Promise.allSettled([...this.inFlight]), this.closeTimeoutMs);
      const disconnected = await settlesWithin(
        Promise.all([
          this.producer.disconnect().catch(() => undefined),
          this.admin?.disconnect().catch(() => undefined),
        ]),
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

  /** Asks the broker for its metadata with capped back-off until it answers (or close()). */
  private async probe(): Promise<void> {
    for (let attempt = 1; this.availability === 'unavailable'; attempt++) {
      if (!(await sleep(backoffMs(attempt, PROBE_INITIAL_MS, PROBE_MAX_MS), this.closeSignal.signal))) return;
      if (this.availability !== 'unavailable') return;
      const admin = (this.admin ??= this.kafka.admin());
      try {
        await admin.connect();
        await admin.describeCluster();
        if (!this.closing) this.markAvailable();
      } catch (error) {
        this.unavailableReason = messageOf(toQueueError(error, 'Kafka does not answer'));
        // A fresh client next time: this one may hold a dead connection.
        this.admin = undefined;
        await admin.disconnect().catch(() => undefined);
      }
    }
  }

  /** Settles by the deadline: the send itself may go on (kafkajs retries) but nobody waits for it. */
  private async publishWithinDeadline(topic: string, chunks: Message[][], count: number): Promise<void> {
    const sending = this.send(topic, chunks);
    // A send that outlives its deadline must not end as an unhandled rejection.
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

  private async send(topic: string, chunks: Message[][]): Promise<void> {
    await this.connect();
    // One chunk after the other: a key's messages keep their order across chunks.
    for (const chunk of chunks) {
      try {
        await this.producer.send({
          topic,
          messages: chunk,
          acks: -1,
          timeout: this.timeoutMs,
          compression: this.compression,
        });
      } catch (error) {
        throw toQueueError(error, `cannot publish to ${topic}`);
      }
    }
  }

  /** Splits the messages into produce requests of at most maxMessageBytes; refuses an oversized one. */
  private chunk(messages: QueueMessage[]): Message[][] {
    const chunks: Message[][] = [];
    let current: Message[] = [];
    let currentBytes = 0;
    for (const message of messages) {
      const bytes = estimateBytes(message);
      if (bytes > this.maxMessageBytes) {
        throw new MessageTooLargeError(
          `a message of ${bytes} bytes exceeds the limit of ${this.maxMessageBytes} bytes`,
          this.maxMessageBytes,
        );
      }
      if (current.length > 0 && currentBytes + bytes > this.maxMessageBytes) {
        chunks.push(current);
        current = [];
        currentBytes = 0;
      }
      current.push({ key: message.key, value: message.value, headers: message.headers });
      currentBytes += bytes;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }
}
