import { ConfigError, Environment, readInteger, readString } from './env.util';

export interface KafkaConfig {
  /**
   * `host:port` of the bootstrap brokers. Undefined when `KAFKA_BROKERS` is not set: the standalone
   * app then uses the in-process bus, and the split apps refuse to start.
   */
  brokers: string[] | undefined;
  clientId: string;
  /** Consumer group of the ingestion consumers. */
  consumerGroupId: string;
  /**
   * Partitions one ingestion consumer processes at the same time (each still in order). More
   * than one overlaps one partition's Postgres and ClickHouse round trips with another's, and the
   * batches written at the same time share one ClickHouse insert. Default 8, the event topics'
   * default partition count: one process works on all of them at once.
   */
  consumerConcurrency: number;
  /**
   * Most messages per ingestion handler call: one Postgres transaction and one share of a
   * ClickHouse insert. Default 2,000 (bench/README.md: larger calls made fewer, larger inserts).
   */
  consumerMaxBatchSize: number;
  /**
   * Bytes one fetch reads per partition; a fetch reads at most this times consumerConcurrency.
   * Default 8 MiB, so that a partition with a backlog fills a whole call (capture's messages are
   * about 2.5 KB); lower it to bound memory: a fetch in flight is held in memory whole.
   */
  consumerFetchBytesPerPartition: number;
  /** Partitions of the topics the migrate step creates; the ceiling on ingestion consumers. */
  topicPartitions: number;
  replicationFactor: number;
  /** Upper bound on one publish, from the call to the broker's acknowledgement of every message. */
  producerTimeoutMs: number;
  /** Largest single message; must not exceed the broker's (or topic's) `message.max.bytes`. */
  maxMessageBytes: number;
}

// A host name, an IPv4 address or a bracketed IPv6 address, then a port.
const BROKER = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

export function loadKafkaConfig(env: Environment = process.env): KafkaConfig {
  const rawBrokers = readString(env, 'KAFKA_BROKERS');
  let brokers: string[] | undefined;
  if (rawBrokers !== undefined) {
    brokers = rawBrokers
      .split(',')
      .map((broker) => broker.trim())
      .filter(Boolean);
    for (const broker of brokers) {
      const match = BROKER.exec(broker);
      const port = match ? Number(match[3]) : 0;
      if (!match || port < 1 || port > 65535) {
        throw new ConfigError(
          'KAFKA_BROKERS',
          rawBrokers,
          `"${broker}" is not host:port (a comma-separated list of host:port is expected)`,
        );
      }
    }
    if (brokers.length === 0) {
      throw new ConfigError('KAFKA_BROKERS', rawBrokers, 'must list at least one host:port');
    }
  }
  return {
    brokers,
    clientId: readString(env, 'KAFKA_CLIENT_ID', 'hogbase'),
    consumerGroupId: readString(env, 'KAFKA_CONSUMER_GROUP', 'hogbase-ingestion'),
    consumerConcurrency: readInteger(env, 'KAFKA_CONSUMER_CONCURRENCY', 8, 1),
    consumerMaxBatchSize: readInteger(env, 'KAFKA_CONSUMER_MAX_BATCH_SIZE', 2_000, 1),
    consumerFetchBytesPerPartition: readInteger(
      env,
      'KAFKA_FETCH_BYTES_PER_PARTITION',
      8 * 1024 * 1024,
      64 * 1024,
    ),
    // NOTE: 8 partitions let up to 8 ingestion consumers share the load, which is plenty for a
    // self-hosted install, and cost a single broker next to nothing. Raise it before the first
    // migrate: adding partitions later moves keys to other partitions, which breaks per-person
    // order for the events in flight at that moment.
    topicPartitions: readInteger(env, 'KAFKA_TOPIC_PARTITIONS', 8, 1),
    replicationFactor: readInteger(env, 'KAFKA_REPLICATION_FACTOR', 1, 1),
    producerTimeoutMs: readInteger(env, 'KAFKA_PRODUCER_TIMEOUT_MS', 5_000, 100),
    maxMessageBytes: readInteger(env, 'KAFKA_MAX_MESSAGE_BYTES', 1_000_000, 1_024),
  };
}
