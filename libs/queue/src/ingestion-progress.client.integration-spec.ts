import { Kafka, logLevel } from 'kafkajs';
import { KafkaIngestionProgress } from './ingestion-progress.client';
import { createTopic, testBrokers, uniqueName } from './testing/kafka-test.util';

const MINUTE = 60_000;

describe('KafkaIngestionProgress on a real broker', () => {
  let kafka: Kafka;
  let topic: string;
  const groupId = uniqueName('progress-group');
  /** The time asked about: ten minutes ago, so that the append bound (30 s) is long past. */
  const time = Date.now() - 10 * MINUTE;

  beforeAll(async () => {
    const brokers = testBrokers();
    kafka = new Kafka({ brokers, clientId: 'progress-test', logLevel: logLevel.NOTHING });
    // Partition 0: three messages stamped before `time`, then two well after it. Partition 1 stays empty.
    topic = await createTopic(brokers, 'progress', 2);
    const producer = kafka.producer();
    await producer.connect();
    const stamped = (at: number, value: string) => ({ key: 'k', value, partition: 0, timestamp: String(at) });
    await producer.send({
      topic,
      messages: [
        stamped(time - 3 * MINUTE, 'a'),
        stamped(time - 2 * MINUTE, 'b'),
        stamped(time - MINUTE, 'c'),
        stamped(time + 2 * MINUTE, 'd'),
        stamped(time + 3 * MINUTE, 'e'),
      ],
    });
    await producer.disconnect();
  });

  async function commit(offset: string): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset }] });
    } finally {
      await admin.disconnect();
    }
  }

  it("compares the group's committed offsets with the first message stamped after the time", async () => {
    const progress = new KafkaIngestionProgress({ kafka, groupId, topics: [topic] });
    try {
      // Nothing committed: the three older messages are left (the empty partition holds nothing back).
      expect(await progress.processedUntil(new Date(time))).toBe(
        `ingestion (group ${groupId}) has up to 3 messages left before ${new Date(time).toISOString()}`,
      );
      await commit('2');
      expect(await progress.processedUntil(new Date(time))).toMatch(/has up to 1 messages left/);
      await commit('3');
      expect(await progress.processedUntil(new Date(time))).toBe(true);
      // A later time also needs the later messages.
      expect(await progress.processedUntil(new Date(time + 4 * MINUTE))).toMatch(/has up to 2 messages left/);
      await commit('5');
      expect(await progress.processedUntil(new Date(time + 4 * MINUTE))).toBe(true);
    } finally {
      await progress.close();
    }
  });

  it('cannot tell before the append bound has passed', async () => {
    const progress = new KafkaIngestionProgress({ kafka, groupId, topics: [topic] });
    try {
      expect(await progress.processedUntil(new Date())).toMatch(/may be appended to Kafka until/);
    } finally {
      await progress.close();
    }
  });

  it('rejects while Kafka is unreachable (the workers ask again later)', async () => {
    const unreachable = new Kafka({
      brokers: ['127.0.0.1:1'],
      clientId: 'progress-test',
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
    const progress = new KafkaIngestionProgress({ kafka: unreachable, groupId, topics: [topic] });
    await expect(progress.processedUntil(new Date(time))).rejects.toThrow();
    await progress.close();
  });
});
