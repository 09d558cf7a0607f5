import pino from 'pino';
import { DataSource } from 'typeorm';
import {
  closeClickHouse,
  createClickHouse,
  migrateClickHouse,
  type ClickHouseClient,
} from '@hogbase/clickhouse';
import {
  ConfigError,
  describeClickHouse,
  describeDatabase,
  loadClickHouseConfig,
  loadKafkaConfig,
  type ClickHouseConfig,
  type KafkaConfig,
  type LogLevel,
  type ManagementConfig,
} from '@hogbase/config';
import { findRunningEmbeddedPostgres, migratePostgres, postgresDataSourceOptions } from '@hogbase/postgres';
import { ensureTopics, eventTopicSpecs, type EnsuredTopic } from '@hogbase/queue';
import { list } from '../admin-arguments.util';
import { connectPostgres } from '../admin-context.util';
import { AdminError, UsageError } from '../admin.errors';

const MIGRATE_STEPS = ['postgres', 'clickhouse', 'kafka'] as const;
export type MigrateStep = (typeof MIGRATE_STEPS)[number];

interface MigrateResult {
  migrated: true;
  postgres: { target: string; applied: string[] } | null;
  clickhouse: { target: string; database: string; applied: string[] } | null;
  /** Null as well when KAFKA_BROKERS is unset. */
  kafka: { brokers: string[]; topics: EnsuredTopic[] } | null;
}

/** The steps `--only` names, every step without it. */
export function migrateSteps(only: string | undefined): Set<MigrateStep> {
  if (only === undefined) return new Set(MIGRATE_STEPS);
  const steps = list(only).map((step) => {
    const known = MIGRATE_STEPS.find((candidate) => candidate === step);
    if (!known) throw new UsageError(`--only: ${step} is not one of ${MIGRATE_STEPS.join(', ')}`);
    return known;
  });
  if (steps.length === 0) throw new UsageError(`--only needs one or more of ${MIGRATE_STEPS.join(', ')}`);
  return new Set(steps);
}

/** Postgres, then ClickHouse, then the Kafka topics: each step is safe to run again. */
export async function migrate(config: ManagementConfig, only: string | undefined): Promise<MigrateResult> {
  const steps = migrateSteps(only);
  // Every setting is read before the first step, so a bad one stops the run before anything changed.
  const clickhouseConfig = loadClickHouseConfig();
  const kafkaConfig = loadKafkaConfig();
  if (only !== undefined && steps.has('kafka') && !kafkaConfig.brokers) {
    throw new ConfigError(
      'KAFKA_BROKERS',
      '',
      'is required by --only kafka: the in-process bus has no topics',
    );
  }

  const postgres = steps.has('postgres') ? await migratePostgresDatabase(config) : null;
  const clickhouse = steps.has('clickhouse')
    ? await migrateClickHouseDatabase(config, clickhouseConfig, kafkaConfig)
    : null;
  // Without KAFKA_BROKERS events go through the in-process bus: there are no topics to create.
  const { brokers } = kafkaConfig;
  const kafka =
    steps.has('kafka') && brokers
      ? await createKafkaTopics({ ...kafkaConfig, brokers }, config.logLevel)
      : null;
  return { migrated: true, postgres, clickhouse, kafka };
}

async function migratePostgresDatabase(config: ManagementConfig): Promise<MigrateResult['postgres']> {
  const { databaseUrl, embedded } = await connectPostgres(config);
  // A small pool: the migrations run on the migration lock's own connection.
  const dataSource = new DataSource(
    postgresDataSourceOptions({ url: databaseUrl, poolSize: 2, applicationName: 'admin-cli' }),
  );
  try {
    await dataSource.initialize();
    const { applied } = await migratePostgres(dataSource);
    return { target: describeDatabase(config.database, config.dataDir), applied };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

async function migrateClickHouseDatabase(
  config: ManagementConfig,
  clickhouse: ClickHouseConfig,
  kafka: KafkaConfig,
): Promise<MigrateResult['clickhouse']> {
  let client: ClickHouseClient;
  try {
    client = createClickHouse(clickhouse);
  } catch (error) {
    if (clickhouse.url || (error as { code?: unknown }).code !== 'CHDB_CONNECTION') throw error;
    // TRICKY: chDB admits one process per data path, and `npm start` holds its path while it runs.
    const holder = (await findRunningEmbeddedPostgres(config.dataDir))
      ? `the running server of ${config.dataDir} (npm start) holds it, and applied the ClickHouse migrations when it started`
      : 'another process may hold it: chDB admits one process per data path';
    const otherSteps = kafka.brokers ? 'postgres,kafka' : 'postgres';
    throw new AdminError(
      `cannot open the embedded ClickHouse (chDB) in ${clickhouse.dataPath}: ${holder}. ` +
        `Stop that process to migrate ClickHouse from here, or run \`migrate --only ${otherSteps}\`.`,
      { cause: error },
    );
  }
  try {
    const { applied } = await migrateClickHouse(client, {
      database: clickhouse.database,
      cluster: clickhouse.cluster,
    });
    return { target: describeClickHouse(clickhouse), database: clickhouse.database, applied };
  } finally {
    await closeClickHouse(client);
  }
}

async function createKafkaTopics(
  kafka: KafkaConfig & { brokers: string[] },
  logLevel: LogLevel,
): Promise<MigrateResult['kafka']> {
  // stdout carries only the JSON result; a topic left with fewer partitions is logged on stderr.
  const logger = pino({ level: logLevel }, pino.destination({ dest: 2, sync: true }));
  const specs = eventTopicSpecs(kafka.topicPartitions, kafka.replicationFactor);
  const topics = await ensureTopics(kafka.brokers, specs, { clientId: `${kafka.clientId}-admin`, logger });
  return { brokers: kafka.brokers, topics };
}
