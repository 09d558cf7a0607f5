import type { QueueMessage } from '@hogbase/event-contract';

/** For a readiness probe: `reason` says what a queue end waits for; it turns ready again by itself. */
export interface QueueReadiness {
  ready: boolean;
  reason?: string;
}

/** `publish` resolves once every message is durably accepted (`acks: -1`, or processed in-process). */
export interface EventPublisher {
  publish(topic: string, messages: QueueMessage[]): Promise<void>;
  /** Bounded even when the broker does not answer: an unacknowledged publish fails, never reports stored. */
  close(): Promise<void>;
  ready(): QueueReadiness;
  /** MessageTooLargeError beyond this many bytes. */
  readonly maxMessageBytes?: number;
}

export interface ConsumedMessage {
  /** Null only for a message another producer sent without a key. */
  key: string | null;
  /** UTF-8; an empty string for a Kafka tombstone. */
  value: string;
  headers: Record<string, string>;
  /** Decimal string (a sequence number in-process). */
  offset: string;
}

/** Messages of one partition of one topic, in partition order. */
export interface ConsumedBatch {
  topic: string;
  partition: number;
  messages: ConsumedMessage[];
  /** Kafka only: the lag after this batch is `highWatermark - lastOffset - 1`. */
  highWatermark?: string;
}

/** Resolving commits the batch (each message written, dead-lettered or dropped); a throw redelivers it. */
export type BatchHandler = (batch: ConsumedBatch) => Promise<void>;

/** `decode` needs nothing but the message, so the in-process bus may run it ahead of `handle`. */
export interface DecodingBatchHandler<Decoded> {
  decode(message: ConsumedMessage): Decoded;
  handle(batch: DecodedBatch<Decoded>): Promise<void>;
}

export interface DecodedBatch<Decoded> extends ConsumedBatch {
  /** In order: what was decoded ahead of the call, the rest now. */
  decoded(): Decoded[];
  /** The rest of the call mostly waits on another thread: the in-process bus decodes ahead meanwhile. */
  waiting(): void;
}

export interface EventConsumer {
  /** Resolves once in the group, retrying while unreachable; rejects on a missing topic or an early stop(). */
  start(handler: BatchHandler): Promise<void>;
  startDecoding<Decoded>(handler: DecodingBatchHandler<Decoded>): Promise<void>;
  /** Commits what was processed and leaves the group; bounded even when the broker does not answer. */
  stop(): Promise<void>;
  /** Liveness: false only once stopped or failed for good; a transient problem shows in `ready()`. */
  healthy(): boolean;
  /** False while joining, unreachable or a partition's handler fails (the reason says which). No I/O. */
  ready(): QueueReadiness;
}
