import { randomBytes } from 'node:crypto';
import { DEAD_LETTER_TOPIC } from '@hogbase/event-contract';
import { KafkaEventConsumer, type ConsumedMessage } from '@hogbase/queue';

/**
 * The first message of the dead-letter topic that `matches`, read from the topic's beginning in a
 * group of its own; fails after `timeoutMs`.
 */
export async function waitForDeadLetter(
  brokers: string[],
  matches: (message: ConsumedMessage) => boolean,
  timeoutMs: number,
): Promise<ConsumedMessage> {
  const consumer = new KafkaEventConsumer({
    brokers,
    groupId: `faults-dead-letters-${randomBytes(4).toString('hex')}`,
    topics: [DEAD_LETTER_TOPIC],
    maxWaitTimeMs: 500,
  });
  let found: ConsumedMessage | undefined;
  try {
    await consumer.start(async (batch) => {
      found ??= batch.messages.find(matches);
      await Promise.resolve();
    });
    for (const deadline = Date.now() + timeoutMs; !found;) {
      if (Date.now() > deadline) throw new Error(`no such dead letter within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return found;
  } finally {
    await consumer.stop();
  }
}
