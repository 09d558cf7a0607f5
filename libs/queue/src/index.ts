export type {
  BatchHandler,
  ConsumedBatch,
  ConsumedMessage,
  DecodedBatch,
  DecodingBatchHandler,
  EventConsumer,
  EventPublisher,
  QueueReadiness,
} from './queue.types';
export { decodedInCall } from './decoded-batch.util';
export { MessageTooLargeError, QueueUnavailableError } from './queue.errors';
export { KafkaEventPublisher } from './kafka.publisher';
export { KafkaEventConsumer, type KafkaConsumerOptions } from './kafka.consumer';
export { InProcessBus } from './in-process-bus.server';
export {
  DEAD_LETTER_HEAD_BYTES,
  DEAD_LETTER_REASON_HEADER,
  DEAD_LETTER_SOURCE_OFFSET_HEADER,
  DEAD_LETTER_TRUNCATED_HEADER,
  DEAD_LETTER_VALUE_BYTES_HEADER,
  toDeadLetter,
} from './dead-letter.util';
export { ensureTopics, eventTopicSpecs, missingTopics, type EnsuredTopic } from './kafka-topics.util';
export { KafkaIngestionProgress, type IngestionProgress } from './ingestion-progress.client';
export { createKafkaClient } from './kafka-client.util';
export { sleep } from './deadline.util';
export { keyHash } from './murmur2.util';
