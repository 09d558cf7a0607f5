import type { QueueMessage } from '@hogbase/event-contract';

/**
 * Whether a queue end can do its job right now, for a readiness probe: `reason` says what it
 * waits for when it cannot (Kafka unreachable, the group not joined yet, the handler failing).
 * Transient: it turns ready again by itself once the cause is gone.
 */
export interface QueueReadiness {
  ready: boolean;
  reason?: string;
}

/**
 * Puts messages on a topic. `publish` resolves only once every message is durably accepted: by
 * the Kafka broker with `acks: -1`, or (in-process bus) once the consumer has processed it. It
 * rejects with `QueueUnavailableError` (capture answers 503) or `MessageTooLargeError` (413).
 */
export interface EventPublisher {
  publish(topic: string, messages: QueueMessage[]): Promise<void>;
  /**
   * Stops taking publishes and waits for those in flight, within a bound even when the broker does
   * not answer (a publish still unacknowledged then fails, it is never reported as stored).
   * Idempotent.
   */
  close(): Promise<void>;
  /** Not ready while the queue cannot take publishes (broker unreachable, closed). Cheap: no I/O. */
  ready(): QueueReadiness;
  /** The largest message it takes (MessageTooLargeError beyond), when it has such a bound. */
  readonly maxMessageBytes?: number;
}

export interface ConsumedMessage {
  /** The partition key; null only for a message some other producer sent without one. */
  key: string | null;
  /** The message body as UTF-8 (an empty string for a Kafka tombstone). */
  value: string;
  headers: Record<string, string>;
  /** Kafka offset within the partition, as a decimal string (a sequence number in-process). */
  offset: string;
}

/** Messages of one partition of one topic, in partition order. */
export interface ConsumedBatch {
  topic: string;
  partition: number;
  messages: ConsumedMessage[];
  /**
   * Offset of the next message the partition will get, when the batch was fetched (Kafka only):
   * the partition's lag after this batch is `highWatermark - lastOffset - 1`.
   */
  highWatermark?: string;
}

/**
 * Processes one batch. Resolving means every message of the batch ended as written, dead-lettered
 * or dropped (with a reason): its offsets are committed afterwards. Throwing means a transient
 * failure: nothing of the batch is committed and the same messages come again.
 */
export type BatchHandler = (batch: ConsumedBatch) => Promise<void>;

/**
 * A handler in two steps, so that its consumer may run the first ahead of the call: `decode` is
 * the work on one message that needs nothing but the message, `handle` is the call (with
 * BatchHandler's contract). The in-process bus decodes queued messages while the running call
 * waits (`DecodedBatch.waiting`); a Kafka consumer decodes in the call.
 */
export interface DecodingBatchHandler<Decoded> {
  decode(message: ConsumedMessage): Decoded;
  handle(batch: DecodedBatch<Decoded>): Promise<void>;
}

/** A batch for a DecodingBatchHandler. */
export interface DecodedBatch<Decoded> extends ConsumedBatch {
  /** `decode` of each message, in order: what was decoded ahead of the call, the rest now. */
  decoded(): Decoded[];
  /**
   * The handler says that what is left of its call mostly waits for another thread (its ClickHouse
   * insert): a consumer whose calls run one after another on this thread decodes the next calls'
   * messages meanwhile. Kafka's calls run side by side, one per partition: nothing to do there.
   */
  waiting(): void;
}

export interface EventConsumer {
  /**
   * Starts consuming. Resolves once the consumer is in its group with its partitions (`ready()`
   * is then true). While the queue is unreachable it keeps trying, with capped back-off, and
   * `ready()` says why it waits. Rejects on what retrying cannot fix (a topic that does not
   * exist), or when stop() is called first.
   */
  start(handler: BatchHandler): Promise<void>;
  /** start() for a handler in two steps: a message is decoded ahead where the consumer can, else in its call. */
  startDecoding<Decoded>(handler: DecodingBatchHandler<Decoded>): Promise<void>;
  /**
   * Stops intake, waits for the batch in flight, commits what was processed, leaves the group
   * (its partitions go to the other members at once), disconnects. Bounded even when the broker
   * does not answer: what was not committed is consumed again by the next owner. Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Liveness: false only once the consumer is stopped or has failed for good (restarting the
   * process is the cure). A transient problem shows in `ready()`, not here.
   */
  healthy(): boolean;
  /**
   * Readiness: true while the consumer is in its group and processing. False while starting or
   * rejoining, while the queue is unreachable, and while the handler fails (the batch is retried
   * in place): the reason says which. Cheap: no I/O.
   */
  ready(): QueueReadiness;
}
