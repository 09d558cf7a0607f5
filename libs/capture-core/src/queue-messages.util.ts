import {
  queueMessageBytes,
  toQueueMessage,
  type CapturedEvent,
  type QueueMessage,
} from '@hogbase/event-contract';
import { EventTooLargeError } from './capture.errors';
import { DEFAULT_MAX_EVENT_BYTES } from './event-normalizer.util';

/** The key (at most ~210 characters) and header names; header values repeat fields of the value. */
const KEY_AND_HEADER_NAMES_CHARACTERS = 512;

/** EventTooLargeError (413) for the whole request when a message passes `maxEventBytes`, in any run mode. */
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
