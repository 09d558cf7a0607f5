import { DataSource } from 'typeorm';
import { closeClickHouse, createClickHouse, pendingClickHouseMigrations } from '@hogbase/clickhouse';
import {
  ConfigError,
  loadClickHouseConfig,
  loadKafkaConfig,
  type ClickHouseConfig,
  type KafkaConfig,
  type ManagementConfig,
} from '@hogbase/config';
import { pendingPostgresMigrations, postgresDataSourceOptions } from '@hogbase/postgres';
import { eventTopicSpecs, missingTopics, sleep } from '@hogbase/queue';
import { AdminError, UsageError } from '../admin.errors';
import { migrateSteps, type MigrateStep } from './migrate.handler';

/** What each step still lacks: pending migration names, missing topics, or why it cannot tell. */
async function pendingSteps(
  config: ManagementConfig,
  steps: Set<MigrateStep>,
  clickhouse: ClickHouseConfig,
  kafka: KafkaConfig,
): Promise<string[]> {
  const pending: string[] = [];
  const check = async (step: MigrateStep, lacks: () => Promise<string[]>) => {
    if (!steps.has(step)) return;
    try {
      const names = await lacks();
      if (names.length > 0) pending.push(`${step}: ${names.join(', ')}`);
    } catch (error) {
      pending.push(`${step}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const databaseUrl = config.database.url;
  await check('postgres', async () => {
    if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required by migrate --wait');
    const dataSource = new DataSource(
      postgresDataSourceOptions({ url: databaseUrl, poolSize: 1, applicationName: 'admin-cli' }),
    );
    try {
      await dataSource.initialize();
      return await pendingPostgresMigrations(dataSource);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
    }
  });
  await check('clickhouse', async () => {
    const client = createClickHouse(clickhouse);
    try {
      return await pendingClickHouseMigrations(client, {
        database: clickhouse.database,
        cluster: clickhouse.cluster,
      });
    } finally {
      await closeClickHouse(client);
    }
  });
  const { brokers } = kafka;
  if (brokers) {
    await check('kafka', () =>
      missingTopics(brokers, eventTopicSpecs(kafka.topicPartitions, kafka.replicationFactor), {
        clientId: `${kafka.clientId}-admin`,
      }),
    );
  }
  return pending;
}

const WAIT_POLL_MS = 2_000;

/** An init container's step: returns once the migrate Job has done everything; applies nothing. */
export async function waitForMigrations(
  config: ManagementConfig,
  only: string | undefined,
  timeout: string | undefined,
): Promise<{ migrated: true; waited_seconds: number }> {
  const steps = migrateSteps(only);
  const timeoutSeconds = timeout === undefined ? 600 : Number(timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds <= 0) {
    throw new UsageError('--timeout must be a positive number of seconds');
  }
  if (steps.has('postgres') && !config.database.url) {
    throw new ConfigError(
      'DATABASE_URL',
      '',
      'is required by migrate --wait (it waits on a shared Postgres)',
    );
  }
  const clickhouse = loadClickHouseConfig();
  const kafka = loadKafkaConfig();
  const startedAt = Date.now();
  let reported = '';
  for (;;) {
    const pending = await pendingSteps(config, steps, clickhouse, kafka);
    const waited_seconds = Math.round((Date.now() - startedAt) / 1000);
    if (pending.length === 0) return { migrated: true, waited_seconds };
    const summary = pending.join('; ');
    if (waited_seconds >= timeoutSeconds) {
      throw new AdminError(`still not migrated after ${timeoutSeconds} s: ${summary}`);
    }
    // stdout carries only the JSON result; progress goes to stderr, once per change.
    if (summary !== reported) process.stderr.write(`waiting for the migrate step: ${summary}\n`);
    reported = summary;
    await sleep(WAIT_POLL_MS);
  }
}
