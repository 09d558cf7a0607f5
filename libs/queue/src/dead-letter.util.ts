import { DEAD_LETTER_TOPIC, queueMessageBytes, type QueueMessage } from '@hogbase/event-contract';
import type { ConsumedMessage, EventPublisher } from './queue.types';

export const DEAD_LETTER_REASON_HEADER = 'dead_letter_reason';
/** Where the message was read from, when known. */
export const DEAD_LETTER_SOURCE_TOPIC_HEADER = 'dead_letter_source_topic';
export const DEAD_LETTER_SOURCE_PARTITION_HEADER = 'dead_letter_source_partition';
export const DEAD_LETTER_SOURCE_OFFSET_HEADER = 'dead_letter_source_offset';
export const DEAD_LETTER_AT_HEADER = 'dead_letter_at';
/** `true` on a bounded copy, whose value is only the head of the message's. */
export const DEAD_LETTER_TRUNCATED_HEADER = 'dead_letter_truncated';
/** On a bounded copy: UTF-8 bytes of the whole value, and of the whole message as queued. */
export const DEAD_LETTER_VALUE_BYTES_HEADER = 'dead_letter_value_bytes';
export const DEAD_LETTER_MESSAGE_BYTES_HEADER = 'dead_letter_message_bytes';

/** KafkaPublisherOptions.maxMessageBytes' default. */
export const DEFAULT_DEAD_LETTER_MAX_BYTES = 1_000_000;
export const DEAD_LETTER_HEAD_BYTES = 64 * 1024;
/** A bounded copy keeps the key's head, and the message's own headers only when this small together. */
const KEY_HEAD_BYTES = 1024;
const ORIGINAL_HEADERS_BYTES = 16 * 1024;

const MAX_REASON_LENGTH = 2_000;

export interface DeadLetterSource {
  topic: string;
  partition: number;
  offset: string;
}

/** Never splits a character. */
export function utf8Head(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // A continuation byte (10xxxxxx) at the cut belongs to a character that began before it.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

function headersBytes(headers: Record<string, string> | undefined): number {
  let bytes = 0;
  for (const name in headers) bytes += Buffer.byteLength(name) + Buffer.byteLength(headers[name]);
  return bytes;
}

/**
 * Same key, value and headers plus the reason and source; a copy over `maxBytes` (queueMessageBytes)
 * is bounded to the value's head, the sizes and the small headers. TRICKY: a message under the
 * broker's limit can have a copy over the producer's, which would fail its batch on every retry and
 * hold the partition for good.
 */
export function toDeadLetter(
  message: QueueMessage | ConsumedMessage,
  reason: string,
  source?: DeadLetterSource,
  maxBytes = DEFAULT_DEAD_LETTER_MAX_BYTES,
): QueueMessage {
  const deadLetterHeaders: Record<string, string> = {
    [DEAD_LETTER_REASON_HEADER]:
      reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH)}…` : reason,
    [DEAD_LETTER_AT_HEADER]: new Date().toISOString(),
  };
  if (source) {
    deadLetterHeaders[DEAD_LETTER_SOURCE_TOPIC_HEADER] = source.topic;
    deadLetterHeaders[DEAD_LETTER_SOURCE_PARTITION_HEADER] = String(source.partition);
    deadLetterHeaders[DEAD_LETTER_SOURCE_OFFSET_HEADER] = source.offset;
  }
  const whole: QueueMessage = {
    key: message.key ?? '',
    value: message.value,
    headers: { ...message.headers, ...deadLetterHeaders },
  };
  const wholeBytes = queueMessageBytes(whole);
  if (wholeBytes <= maxBytes) return whole;

  const boundedHeaders: Record<string, string> = {
    ...deadLetterHeaders,
    [DEAD_LETTER_TRUNCATED_HEADER]: 'true',
    [DEAD_LETTER_VALUE_BYTES_HEADER]: String(Buffer.byteLength(message.value)),
    [DEAD_LETTER_MESSAGE_BYTES_HEADER]: String(wholeBytes),
  };
  const key = utf8Head(message.key ?? '', KEY_HEAD_BYTES);
  let bounded: QueueMessage = { key, value: '', headers: boundedHeaders };
  if (headersBytes(message.headers) <= ORIGINAL_HEADERS_BYTES) {
    const withOwnHeaders = { key, value: '', headers: { ...message.headers, ...boundedHeaders } };
    if (queueMessageBytes(withOwnHeaders) <= maxBytes) bounded = withOwnHeaders;
  }
  bounded.value = utf8Head(
    message.value,
    Math.min(DEAD_LETTER_HEAD_BYTES, maxBytes - queueMessageBytes(bounded)),
  );
  return bounded;
}

/** Bounded to what the publisher takes (toDeadLetter). */
export function publishDeadLetter(
  publisher: EventPublisher,
  message: QueueMessage | ConsumedMessage,
  reason: string,
  source?: DeadLetterSource,
): Promise<void> {
  return publisher.publish(DEAD_LETTER_TOPIC, [
    toDeadLetter(message, reason, source, publisher.maxMessageBytes),
  ]);
}
