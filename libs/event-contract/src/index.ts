export {
  DEAD_LETTER_TOPIC,
  EVENTS_TOPIC,
  HISTORICAL_EVENTS_TOPIC,
  partitionKey,
  queueMessageBytes,
  toQueueMessage,
  type CapturedEvent,
  type QueueMessage,
  type RawEvent,
} from './captured-event.util';
