import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import type { QueueMessage } from '@hogbase/event-contract';
import { createKafkaClient, toQueueError, type KafkaClientOptions } from './kafka-client.util';
import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';
import type { EventPublisher } from './queue.types';

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
 */
export class KafkaEventPublisher implements EventPublisher {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly timeoutMs: number;
  private readonly maxMessageBytes: number;
  private readonly compression: CompressionTypes;
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(options: KafkaPublisherOptions) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.maxMessageBytes = options.maxMessageBytes ?? 1_000_000;
    this.compression = options.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
    this.kafka = createKafkaClient({
      ...options,
      // A broker that does not answer must not hold a request past the publish deadline.
      requestTimeoutMs: options.requestTimeoutMs ?? this.timeoutMs,
    });
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
    this.connecting ??= this.producer.connect().catch((error: unknown) => {
      // Forget the failed attempt so that the next publish tries again.
      this.connecting = undefined;
      throw toQueueError(error, 'cannot connect to Kafka');
    });
    return this.connecting;
  }

  async publish(topic: string, messages: QueueMessage[]): Promise<void> {
    if (this.closing) throw new QueueUnavailableError('the Kafka publisher is closed');
    if (messages.length === 0) return;
    const chunks = this.chunk(messages);
    const sending = this.send(topic, chunks);
    this.inFlight.add(sending);
    void sending.catch(() => undefined).finally(() => this.inFlight.delete(sending));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new QueueUnavailableError(
              `Kafka did not acknowledge ${messages.length} message(s) to ${topic} within ${this.timeoutMs} ms`,
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

  /** Stops taking publishes, lets those in flight finish (each bounded by the timeout), disconnects. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.inFlight]);
      await this.producer.disconnect().catch(() => undefined);
    })();
    return this.closing;
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
