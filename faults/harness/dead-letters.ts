import { randomBytes } from 'node:crypto';
import { DEAD_LETTER_TOPIC } from '@hogbase/event-contract';
import { KafkaEventConsumer, type ConsumedMessage } from '@hogbase/queue';
import { eventually } from '@hogbase/test-support';

/** Read from the topic's beginning in a group of its own; fails after `timeoutMs`. */
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
    return await eventually('a matching dead letter', () => found, { timeoutMs, intervalMs: 250 });
  } finally {
    await consumer.stop();
  }
}
