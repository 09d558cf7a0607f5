import { DEAD_LETTER_TOPIC, type QueueMessage } from '@hogbase/event-contract';
import type { ConsumedMessage, EventPublisher } from './queue.types';

/** Header of a dead-lettered message that says why it could not be processed. */
export const DEAD_LETTER_REASON_HEADER = 'dead_letter_reason';
/** Where the message was read from, when known: `<topic>`, `<partition>`, `<offset>`. */
export const DEAD_LETTER_SOURCE_TOPIC_HEADER = 'dead_letter_source_topic';
export const DEAD_LETTER_SOURCE_PARTITION_HEADER = 'dead_letter_source_partition';
export const DEAD_LETTER_SOURCE_OFFSET_HEADER = 'dead_letter_source_offset';
export const DEAD_LETTER_AT_HEADER = 'dead_letter_at';

const MAX_REASON_LENGTH = 2_000;

export interface DeadLetterSource {
  topic: string;
  partition: number;
  offset: string;
}

/**
 * The dead-letter copy of a message: same key, value and headers, plus the reason (and the source
 * position when given). For a batch of bad messages, publish these in one call.
 */
export function toDeadLetter(
  message: QueueMessage | ConsumedMessage,
  reason: string,
  source?: DeadLetterSource,
): QueueMessage {
  const headers: Record<string, string> = {
    ...message.headers,
    [DEAD_LETTER_REASON_HEADER]:
      reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH)}…` : reason,
    [DEAD_LETTER_AT_HEADER]: new Date().toISOString(),
  };
  if (source) {
    headers[DEAD_LETTER_SOURCE_TOPIC_HEADER] = source.topic;
    headers[DEAD_LETTER_SOURCE_PARTITION_HEADER] = String(source.partition);
    headers[DEAD_LETTER_SOURCE_OFFSET_HEADER] = source.offset;
  }
  return { key: message.key ?? '', value: message.value, headers };
}

/** Publishes one message to DEAD_LETTER_TOPIC with the reason in the `dead_letter_reason` header. */
export function publishDeadLetter(
  publisher: EventPublisher,
  message: QueueMessage | ConsumedMessage,
  reason: string,
  source?: DeadLetterSource,
): Promise<void> {
  return publisher.publish(DEAD_LETTER_TOPIC, [toDeadLetter(message, reason, source)]);
}
