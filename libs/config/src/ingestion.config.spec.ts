import { loadCaptureConfig } from './capture.config';
import { loadIngestionConfig } from './ingestion.config';
import { loadStandaloneConfig } from './standalone.config';

describe('loadIngestionConfig', () => {
  it('serves probes on 127.0.0.1:8020 by default, with no Postgres or Kafka named', () => {
    const config = loadIngestionConfig({ DATA_DIR: '/srv/hogbase' });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8020,
      database: { url: undefined, poolSize: 10 },
      logLevel: 'info',
      kafka: {
        brokers: undefined,
        consumerGroupId: 'hogbase-ingestion',
        consumerConcurrency: 8,
        consumerMaxBatchSize: 2_000,
        consumerFetchBytesPerPartition: 8 * 1024 * 1024,
      },
      clickhouse: { url: undefined, database: 'hogbase', dataPath: '/srv/hogbase/clickhouse' },
    });
  });

  it('reads its own settings and the shared engines’ from the environment', () => {
    const config = loadIngestionConfig({
      INGESTION_HOST: '0.0.0.0',
      INGESTION_PORT: '9020',
      DATABASE_URL: 'postgres://ingestion:secret@db:5432/hogbase',
      DATABASE_POOL_SIZE: '4',
      LOG_LEVEL: 'warn',
      KAFKA_BROKERS: 'kafka-1:9092,kafka-2:9092',
      KAFKA_CONSUMER_GROUP: 'ingestion-eu',
      KAFKA_CONSUMER_MAX_BATCH_SIZE: '500',
      KAFKA_FETCH_BYTES_PER_PARTITION: '1048576',
      CLICKHOUSE_URL: 'http://clickhouse:8123',
    });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9020,
      database: { url: 'postgres://ingestion:secret@db:5432/hogbase', poolSize: 4 },
      logLevel: 'warn',
      kafka: {
        brokers: ['kafka-1:9092', 'kafka-2:9092'],
        consumerGroupId: 'ingestion-eu',
        consumerMaxBatchSize: 500,
        consumerFetchBytesPerPartition: 1_048_576,
      },
      clickhouse: { url: 'http://clickhouse:8123/' },
    });
  });

  it.each([
    [{ INGESTION_PORT: '80200' }, /^INGESTION_PORT=80200: /],
    [{ DATABASE_POOL_SIZE: '0' }, /^DATABASE_POOL_SIZE=0: /],
    [{ DATABASE_URL: 'mysql://user:secret@db/app' }, /^DATABASE_URL=mysql:\/\/user:\*\*\*@db\/app: /],
    [{ KAFKA_BROKERS: 'kafka' }, /^KAFKA_BROKERS=kafka: /],
    [{ KAFKA_CONSUMER_MAX_BATCH_SIZE: '0' }, /^KAFKA_CONSUMER_MAX_BATCH_SIZE=0: /],
    [{ KAFKA_FETCH_BYTES_PER_PARTITION: '1000' }, /^KAFKA_FETCH_BYTES_PER_PARTITION=1000: /],
  ])('stops on %j with NAME=value: why, never printing a password', (env, message) => {
    expect(() => loadIngestionConfig(env)).toThrow(message);
  });
});

describe('loadStandaloneConfig', () => {
  it('gives capture and ingestion small pools of their own and the engines the management app uses', () => {
    const config = loadStandaloneConfig({ DATA_DIR: '/srv/hogbase', DATABASE_POOL_SIZE: '20' });
    expect(config.management.database.poolSize).toBe(20);
    expect(config.capture.databasePoolSize).toBe(4);
    expect(config.ingestion.database.poolSize).toBe(3);
    expect(config.ingestion.clickhouse).toBe(config.clickhouse);
    expect(config.ingestion.kafka).toBe(config.kafka);
    expect(config.capture.kafka).toBe(config.kafka);
    expect(config.clickhouse.dataPath).toBe('/srv/hogbase/clickhouse');
  });
});

describe('loadCaptureConfig', () => {
  it('carries the queue it publishes to and the size of its Postgres pool', () => {
    const config = loadCaptureConfig({ KAFKA_BROKERS: 'kafka:9092', DATABASE_POOL_SIZE: '6' });
    expect(config.kafka.brokers).toEqual(['kafka:9092']);
    expect(config.databasePoolSize).toBe(6);
  });
});
