import { ConfigError, Environment, readInteger, readString } from './env.util';

export interface KafkaConfig {
  /** Undefined: the standalone app uses the in-process bus, the split apps refuse to start. */
  brokers: string[] | undefined;
  clientId: string;
  consumerGroupId: string;
  /** Partitions processed at once, each in order, sharing one ClickHouse insert; default: all of them. */
  consumerConcurrency: number;
  /** Per handler call: one Postgres transaction and one share of a ClickHouse insert. */
  consumerMaxBatchSize: number;
  /** Lets a backlog fill a whole call; lower it to bound memory (a fetch of up to this × concurrency). */
  consumerFetchBytesPerPartition: number;
  /** Of the topics migrate creates: the ceiling on ingestion consumers. */
  topicPartitions: number;
  replicationFactor: number;
  /** Until the broker acknowledged every message. */
  producerTimeoutMs: number;
  /** At most the broker's (or topic's) `message.max.bytes`. */
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
    // NOTE: raise it before the first migrate: adding partitions later moves keys to other
    // partitions, which breaks per-person order for the events in flight at that moment.
    topicPartitions: readInteger(env, 'KAFKA_TOPIC_PARTITIONS', 8, 1),
    replicationFactor: readInteger(env, 'KAFKA_REPLICATION_FACTOR', 1, 1),
    producerTimeoutMs: readInteger(env, 'KAFKA_PRODUCER_TIMEOUT_MS', 5_000, 100),
    maxMessageBytes: readInteger(env, 'KAFKA_MAX_MESSAGE_BYTES', 1_000_000, 1_024),
  };
}
