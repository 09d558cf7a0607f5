import type { Logger } from 'pino';
import { migrateClickHouse, type ClickHouseClient } from '@hogbase/clickhouse';
import type { KafkaConfig } from '@hogbase/config';
import { ensureTopics, eventTopicSpecs } from '@hogbase/queue';

export interface EventStores {
  /** Its pending migrations are applied. */
  clickhouse?: { client: ClickHouseClient; database: string; cluster?: string };
  /** The missing event topics are created. */
  kafka?: Pick<KafkaConfig, 'brokers' | 'clientId' | 'topicPartitions' | 'replicationFactor'>;
  logger?: Logger;
}

/** Safe to run again and from several processes: ingestion runs it at every start, `admin migrate` too. */
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
