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
  /** False when the topic already existed (it is left as it is). */
  created: boolean;
  /** Partitions the topic has now. */
  partitions: number;
}

/**
 * Creates the topics that do not exist yet (the migrate step); existing ones are left unchanged,
 * so running it again is harmless.
 *
 * NOTE: an existing topic with fewer partitions than asked is not grown: more partitions move keys
 * to other partitions, which breaks per-person order for the events in flight. It is logged, and
 * growing it stays an operator's decision (kafka-topics.sh --alter) at a quiet moment.
 */
export async function ensureTopics(
  brokers: readonly string[],
  topics: readonly TopicSpec[],
  options: Omit<KafkaClientOptions, 'brokers'> = {},
): Promise<EnsuredTopic[]> {
  const logger = options.logger ?? silentLogger;
  // Quiet: kafkajs's line per failed connection attempt goes to debug; the failure is thrown.
  const admin = createKafkaClient({ ...options, brokers }, { quiet: true }).admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic.name));
    if (missing.length > 0) {
      // createTopics also tolerates a topic created meanwhile by a concurrent migrate.
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

/** The names of `topics` the cluster does not have yet; reads only (for a process waiting on migrate). */
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

/** The topics of the event pipeline (live, historical, dead letters), for the migrate step. */
export function eventTopicSpecs(partitions: number, replicationFactor: number): TopicSpec[] {
  return [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC, DEAD_LETTER_TOPIC].map((name) => ({
    name,
    partitions,
    replicationFactor,
  }));
}
