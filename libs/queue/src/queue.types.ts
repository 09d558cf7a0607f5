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
  /**
   * Given by a consumer that can use the handler's waits (the in-process bus): the handler calls it
   * when what is left of the call mostly waits for another thread (its ClickHouse insert), and the
   * consumer then prepares the next batches' messages meanwhile (`BatchHandlerHooks.prepare`),
   * starting after the call's synchronous work of the moment.
   */
  waiting?: () => void;
}

/**
 * Processes one batch. Resolving means every message of the batch ended as written, dead-lettered
 * or dropped (with a reason): its offsets are committed afterwards. Throwing means a transient
 * failure: nothing of the batch is committed and the same messages come again.
 */
export type BatchHandler = (batch: ConsumedBatch) => Promise<void>;

/** What a handler offers its consumer beside the call itself. */
export interface BatchHandlerHooks {
  /**
   * The handler's work on one message that needs nothing but the message (decoding it), done ahead
   * of its call while the running call waits (`ConsumedBatch.waiting`). The handler keeps what it
   * made for the call that delivers this same message object. Only the in-process bus calls it:
   * a Kafka consumer's calls run side by side, one per partition, and leave no such waits.
   */
  prepare?: (message: ConsumedMessage) => void;
}

export interface EventConsumer {
  /**
   * Starts consuming. Resolves once the consumer is in its group with its partitions (`ready()`
   * is then true). While the queue is unreachable it keeps trying, with capped back-off, and
   * `ready()` says why it waits. Rejects on what retrying cannot fix (a topic that does not
   * exist), or when stop() is called first.
   */
  start(handler: BatchHandler, hooks?: BatchHandlerHooks): Promise<void>;
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
