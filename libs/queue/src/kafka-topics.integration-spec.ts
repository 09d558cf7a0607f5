import { pino } from 'pino';
import { DEAD_LETTER_TOPIC } from '@hogbase/event-contract';
import {
  DEAD_LETTER_REASON_HEADER,
  DEAD_LETTER_SOURCE_OFFSET_HEADER,
  DEAD_LETTER_SOURCE_TOPIC_HEADER,
  publishDeadLetter,
} from './dead-letter.util';
import { KafkaEventConsumer } from './kafka.consumer';
import { KafkaEventPublisher } from './kafka.publisher';
import { ensureTopics } from './kafka-topics.util';
import type { ConsumedMessage } from './queue.types';
import { testBrokers, uniqueName, waitFor } from './testing/kafka-test.util';

describe('ensureTopics', () => {
  let brokers: string[];
  beforeAll(() => {
    brokers = testBrokers();
  });

  it('creates missing topics and leaves existing ones unchanged when run again', async () => {
    const live = uniqueName('live');
    const historical = uniqueName('historical');
    const specs = [
      { name: live, partitions: 3, replicationFactor: 1 },
      { name: historical, partitions: 2, replicationFactor: 1 },
    ];
    expect(await ensureTopics(brokers, specs)).toEqual([
      { name: live, created: true, partitions: 3 },
      { name: historical, created: true, partitions: 2 },
    ]);
    expect(await ensureTopics(brokers, specs)).toEqual([
      { name: live, created: false, partitions: 3 },
      { name: historical, created: false, partitions: 2 },
    ]);
  });

  it('does not grow an existing topic and warns about it', async () => {
    const name = uniqueName('grow');
    await ensureTopics(brokers, [{ name, partitions: 1, replicationFactor: 1 }]);
    const warnings: object[] = [];
    const logger = { ...pino({ level: 'silent' }), warn: (entry: object) => void warnings.push(entry) };
    expect(await ensureTopics(brokers, [{ name, partitions: 4, replicationFactor: 1 }], { logger })).toEqual([
      { name, created: false, partitions: 1 },
    ]);
    expect(warnings).toEqual([expect.objectContaining({ topic: name, partitions: 1, configured: 4 })]);
  });
});

describe('publishDeadLetter', () => {
  it('puts the message on the dead-letter topic with the reason in a header', async () => {
    const brokers = testBrokers();
    const logger = pino({ level: 'silent' });
    await ensureTopics(brokers, [{ name: DEAD_LETTER_TOPIC, partitions: 1, replicationFactor: 1 }]);
    const publisher = new KafkaEventPublisher({ brokers, logger });
    const key = uniqueName('poison');
    const consumer = new KafkaEventConsumer({
      brokers,
      logger,
      groupId: uniqueName('dlq'),
      topics: [DEAD_LETTER_TOPIC],
    });
    const found: ConsumedMessage[] = [];
    try {
      await publishDeadLetter(
        publisher,
        { key, value: '{not json', headers: { token: 'phc_test' } },
        'invalid JSON in the message value',
        { topic: 'events_plugin_ingestion', partition: 3, offset: '42' },
      );
      await consumer.start(async (batch) => {
        found.push(...batch.messages.filter((consumed) => consumed.key === key));
        await Promise.resolve();
      });
      await waitFor(() => found.length > 0, 'the dead letter');
    } finally {
      await consumer.stop();
      await publisher.close();
    }
    expect(found).toHaveLength(1);
    expect(found[0].value).toBe('{not json');
    expect(found[0].headers).toMatchObject({
      token: 'phc_test',
      [DEAD_LETTER_REASON_HEADER]: 'invalid JSON in the message value',
      [DEAD_LETTER_SOURCE_TOPIC_HEADER]: 'events_plugin_ingestion',
      [DEAD_LETTER_SOURCE_OFFSET_HEADER]: '42',
    });
  });
});
