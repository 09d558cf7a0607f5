import { DEAD_LETTER_TOPIC, EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient, toQueueError, type KafkaClientOptions } from './kafka-client.util';
import { silentLogger } from './queue-logger.util';

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor: number;
}

export interface EnsuredTopic {
  name: string;
  /** False when the topic already existed (left as it is). */
  created: boolean;
  partitions: number;
}

/**
 * Creates the missing topics; existing ones are left unchanged. An existing topic with fewer
 * partitions is not grown (that moves keys, breaking per-person order in flight): it is logged.
 */
export async function ensureTopics(
  brokers: readonly string[],
  topics: readonly TopicSpec[],
  options: Omit<KafkaClientOptions, 'brokers'> = {},
): Promise<EnsuredTopic[]> {
  const logger = options.logger ?? silentLogger;
  const admin = createKafkaClient({ ...options, brokers }, { quiet: true }).admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic.name));
    if (missing.length > 0) {
      // Tolerates a topic created meanwhile by a concurrent migrate.
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic: topic.name,
          numPartitions: topic.partitions,
          replicationFactor: topic.replicationFactor,
        })),
      });
    }
    const metadata = await admin.fetchTopicMetadata({ topics: topics.map((topic) => topic.name) });
    const partitionsOf = new Map(metadata.topics.map((topic) => [topic.name, topic.partitions.length]));
    return topics.map((topic) => {
      const partitions = partitionsOf.get(topic.name) ?? 0;
      const created = missing.includes(topic);
      if (!created && partitions < topic.partitions) {
        logger.warn(
          { topic: topic.name, partitions, configured: topic.partitions },
          'Kafka topic has fewer partitions than configured; left unchanged',
        );
      }
      return { name: topic.name, created, partitions };
    });
  } catch (error) {
    throw toQueueError(error, 'cannot create the Kafka topics');
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Reads only (for a process waiting on migrate). */
export async function missingTopics(
  brokers: readonly string[],
  topics: readonly TopicSpec[],
  options: Omit<KafkaClientOptions, 'brokers'> = {},
): Promise<string[]> {
  const admin = createKafkaClient({ ...options, brokers }, { quiet: true }).admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    return topics.filter((topic) => !existing.has(topic.name)).map((topic) => topic.name);
  } catch (error) {
    throw toQueueError(error, 'cannot list the Kafka topics');
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export function eventTopicSpecs(partitions: number, replicationFactor: number): TopicSpec[] {
  return [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC, DEAD_LETTER_TOPIC].map((name) => ({
    name,
    partitions,
    replicationFactor,
  }));
}
