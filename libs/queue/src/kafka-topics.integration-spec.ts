import { pino } from 'pino';
import { DEAD_LETTER_TOPIC } from '@hogbase/event-contract';
import {
  DEAD_LETTER_HEAD_BYTES,
  DEAD_LETTER_REASON_HEADER,
  DEAD_LETTER_SOURCE_OFFSET_HEADER,
  DEAD_LETTER_SOURCE_PARTITION_HEADER,
  DEAD_LETTER_SOURCE_TOPIC_HEADER,
  DEAD_LETTER_TRUNCATED_HEADER,
  DEAD_LETTER_VALUE_BYTES_HEADER,
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
  const logger = pino({ level: 'silent' });
  let brokers: string[];
  let publisher: KafkaEventPublisher;

  beforeAll(async () => {
    brokers = testBrokers();
    await ensureTopics(brokers, [{ name: DEAD_LETTER_TOPIC, partitions: 1, replicationFactor: 1 }]);
    publisher = new KafkaEventPublisher({ brokers, logger });
  });

  afterAll(async () => {
    await publisher.close();
  });

  /** The dead letters with this key, read back from the topic. */
  async function deadLettersOf(key: string): Promise<ConsumedMessage[]> {
    const consumer = new KafkaEventConsumer({
      brokers,
      logger,
      groupId: uniqueName('dlq'),
      topics: [DEAD_LETTER_TOPIC],
      maxWaitTimeMs: 200,
    });
    const found: ConsumedMessage[] = [];
    try {
      await consumer.start(async (batch) => {
        found.push(...batch.messages.filter((consumed) => consumed.key === key));
        await Promise.resolve();
      });
      await waitFor(() => found.length > 0, 'the dead letter');
    } finally {
      await consumer.stop();
    }
    return found;
  }

  it('puts the message on the dead-letter topic with the reason in a header', async () => {
    const key = uniqueName('poison');
    await publishDeadLetter(
      publisher,
      { key, value: '{not json', headers: { token: 'phc_test' } },
      'invalid JSON in the message value',
      { topic: 'events_plugin_ingestion', partition: 3, offset: '42' },
    );
    const found = await deadLettersOf(key);
    expect(found).toHaveLength(1);
    expect(found[0].value).toBe('{not json');
    expect(found[0].headers).toMatchObject({
      token: 'phc_test',
      [DEAD_LETTER_REASON_HEADER]: 'invalid JSON in the message value',
      [DEAD_LETTER_SOURCE_TOPIC_HEADER]: 'events_plugin_ingestion',
      [DEAD_LETTER_SOURCE_OFFSET_HEADER]: '42',
    });
  });

  it('puts a bounded copy there of a message too large for the producer once the reason is added', async () => {
    const key = uniqueName('large-poison');
    // 1,040,000 bytes: the broker took it (its limit is 1 MiB), the producer takes 1,000,000.
    const value = `{"not json": "${'x'.repeat(1_040_000 - 14)}`;
    await publishDeadLetter(publisher, { key, value, headers: {} }, 'invalid_json', {
      topic: 'events_plugin_ingestion',
      partition: 5,
      offset: '7',
    });
    const found = await deadLettersOf(key);
    expect(found).toHaveLength(1);
    expect(value.startsWith(found[0].value)).toBe(true);
    expect(found[0].value).toHaveLength(DEAD_LETTER_HEAD_BYTES);
    expect(found[0].headers).toMatchObject({
      [DEAD_LETTER_TRUNCATED_HEADER]: 'true',
      [DEAD_LETTER_VALUE_BYTES_HEADER]: '1040000',
      [DEAD_LETTER_REASON_HEADER]: 'invalid_json',
      [DEAD_LETTER_SOURCE_TOPIC_HEADER]: 'events_plugin_ingestion',
      [DEAD_LETTER_SOURCE_PARTITION_HEADER]: '5',
      [DEAD_LETTER_SOURCE_OFFSET_HEADER]: '7',
    });
  });
});
