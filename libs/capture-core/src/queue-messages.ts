import {
  queueMessageBytes,
  toQueueMessage,
  type CapturedEvent,
  type QueueMessage,
} from '@hogbase/event-contract';
import { EventTooLargeError } from './capture-errors';
import { DEFAULT_MAX_EVENT_BYTES } from './event-normalizer';

/**
 * Room for what a message carries beside its value: the key (`<team>:<distinct id>`, at most ~210
 * characters) and the headers, which repeat fields the value holds already (the event name, the
 * distinct id, the token...), so they are never longer than the value plus this.
 */
const KEY_AND_HEADER_NAMES_CHARACTERS = 512;

/**
 * The queue messages of a request's accepted events. Throws EventTooLargeError (413) for the whole
 * request when one of them is larger than `maxEventBytes` (queueMessageBytes): the same bound in
 * every run mode, so a Kafka deployment and npm start refuse the same events, and nothing larger
 * is ever stored and copied downstream (the apps' destination jobs among others).
 */
export function toQueueMessages(
  events: readonly CapturedEvent[],
  maxEventBytes: number = DEFAULT_MAX_EVENT_BYTES,
): QueueMessage[] {
  const messages: QueueMessage[] = new Array<QueueMessage>(events.length);
  for (let index = 0; index < events.length; index++) {
    const message = toQueueMessage(events[index]);
    // At most 3 UTF-8 bytes per UTF-16 code unit: only a message that could be too large is counted.
    const mostCharacters = 2 * message.value.length + KEY_AND_HEADER_NAMES_CHARACTERS;
    if (mostCharacters * 3 > maxEventBytes && queueMessageBytes(message) > maxEventBytes) {
      throw new EventTooLargeError(maxEventBytes);
    }
    messages[index] = message;
  }
  return messages;
}
