import type { QueueMessage } from '@hogbase/event-contract';

/**
 * Puts messages on a topic. `publish` resolves only once every message is durably accepted: by
 * the Kafka broker with `acks: -1`, or (in-process bus) once the consumer has processed it. It
 * rejects with `QueueUnavailableError` (capture answers 503) or `MessageTooLargeError` (413).
 */
export interface EventPublisher {
  publish(topic: string, messages: QueueMessage[]): Promise<void>;
  /** Stops taking publishes and waits for those in flight. Idempotent. */
  close(): Promise<void>;
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
}

/**
 * Processes one batch. Resolving means every message of the batch ended as written, dead-lettered
 * or dropped (with a reason): its offsets are committed afterwards. Throwing means a transient
 * failure: nothing of the batch is committed and the same messages come again.
 */
export type BatchHandler = (batch: ConsumedBatch) => Promise<void>;

export interface EventConsumer {
  /** Resolves once consuming has started; rejects (QueueUnavailableError) when it cannot. */
  start(handler: BatchHandler): Promise<void>;
  /** Stops intake, waits for the batch in flight, commits what was processed, disconnects. Idempotent. */
  stop(): Promise<void>;
  healthy(): boolean;
}
