import type { Logger } from 'pino';
import { migrateClickHouse, type ClickHouseClient } from '@hogbase/clickhouse';
import type { KafkaConfig } from '@hogbase/config';
import { ensureTopics, eventTopicSpecs } from '@hogbase/queue';

export interface EventStores {
  /** The ClickHouse events are written to: its pending migrations are applied. */
  clickhouse?: { client: ClickHouseClient; database: string; cluster?: string };
  /** The Kafka cluster of the event topics: the missing ones are created (nothing with the in-process bus). */
  kafka?: Pick<KafkaConfig, 'brokers' | 'clientId' | 'topicPartitions' | 'replicationFactor'>;
  logger?: Logger;
}

/**
 * The event pipeline's migrate step, in one place: ClickHouse migrations, then the event topics
 * (live, historical, dead letters). Both are safe to run again and from several processes at once,
 * so ingestion runs it on every start (`startIngestionService`); `npm run admin -- migrate` does
 * the same for a deployment that migrates before it starts anything.
 */
export async function prepareEventStores({ clickhouse, kafka, logger }: EventStores): Promise<void> {
  if (clickhouse) {
    await migrateClickHouse(clickhouse.client, {
      database: clickhouse.database,
      cluster: clickhouse.cluster,
    });
  }
  if (kafka?.brokers) {
    await ensureTopics(kafka.brokers, eventTopicSpecs(kafka.topicPartitions, kafka.replicationFactor), {
      clientId: `${kafka.clientId}-admin`,
      logger,
    });
  }
}
