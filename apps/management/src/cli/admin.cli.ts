import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { DataSource } from 'typeorm';
import {
  type ClickHouseClient,
  ClickHouseMigrationError,
  closeClickHouse,
  createClickHouse,
  migrateClickHouse,
  pendingClickHouseMigrations,
} from '@hogbase/clickhouse';
import {
  type ClickHouseConfig,
  ConfigError,
  describeClickHouse,
  describeDatabase,
  loadClickHouseConfig,
  loadKafkaConfig,
  loadManagementConfig,
  type KafkaConfig,
  type LogLevel,
  type ManagementConfig,
} from '@hogbase/config';
import { ApiError, BootstrapService, InviteService, ManagementModule } from '@hogbase/management-api';
import {
  EmbeddedPostgres,
  findRunningEmbeddedPostgres,
  migratePostgres as migratePostgresDatabase,
  pendingPostgresMigrations,
  postgresDataSourceOptions,
  startEmbeddedPostgres,
} from '@hogbase/postgres';
import {
  type EnsuredTopic,
  ensureTopics,
  eventTopicSpecs,
  missingTopics,
  QueueUnavailableError,
  sleep,
} from '@hogbase/queue';

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  bootstrap --email <e> [--organization <name>] [--project <name>]
      Creates (or reuses) the user, organization and project, and a new personal API key with scope *.
      Prints {"email","personal_api_key","organization_id","project_id","project_api_key"}.
  create-key --email <e> --scopes <'*' or comma list> [--organizations <ids>] [--projects <ids>] [--label <l>]
      Prints {"personal_api_key": "phx_..."}.
  revoke-key --key <phx_...>
      Prints {"revoked": true|false}.
  accept-invite --invite <id> --email <e> [--first-name <n>] [--last-name <n>]
      Turns an invite into a membership. Prints {"user_uuid","organization_id","level"}.
  set-plugins-access-level --organization <id> --level <none|config|install|root>
      What the organization may do with pipeline apps (0, 3, 6, 9 also accepted): new organizations get
      install (their admins install their own apps); root also makes apps global through the API.
      Prints {"organization_id","plugins_access_level"}.
  set-app-global --app <id> --global <true|false>
      Shows a pipeline app to every organization (or stops). Another organization that enables it runs
      the code it enabled until its admin upgrades its config. Prints {"id","name","organization_id","is_global"}.
  migrate [--only <postgres,clickhouse,kafka>]
      Applies the pending Postgres migrations, then the pending ClickHouse migrations, then creates the
      missing Kafka topics (only with KAFKA_BROKERS: the in-process bus has no topics); --only runs the
      steps listed. Prints {"migrated": true, "postgres": {"target","applied"},
      "clickhouse": {"target","database","applied"}, "kafka": {"brokers","topics": [{"name","created","partitions"}]}},
      "applied" naming the migrations this run applied; a step that did not run is null.
  migrate --wait [--only <steps>] [--timeout <seconds>]
      Applies nothing: waits until another process (the deployment's migrate Job) has applied every
      Postgres and ClickHouse migration and created the topics, retrying while they are unreachable.
      Prints {"migrated": true, "waited_seconds"}; exits 1 after --timeout seconds (default 600).
      While \`npm start\` runs on the embedded chDB, no other process may open it (the server migrated
      ClickHouse when it started): leave clickhouse out of --only then.

Database: DATABASE_URL, else the embedded Postgres under DATA_DIR (through the running server when there is one).
ClickHouse: CLICKHOUSE_URL, else the embedded chDB under CLICKHOUSE_DATA_PATH (DATA_DIR/clickhouse). Kafka: KAFKA_BROKERS.
Only the JSON result goes to stdout; errors go to stderr with a non-zero exit code.`;

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

class UsageError extends Error {}

/** A failure the operator can act on from its message alone: printed without a stack. */
class AdminError extends Error {}

const MIGRATE_STEPS = ['postgres', 'clickhouse', 'kafka'] as const;
type MigrateStep = (typeof MIGRATE_STEPS)[number];

interface MigrateResult {
  migrated: true;
  postgres: { target: string; applied: string[] } | null;
  clickhouse: { target: string; database: string; applied: string[] } | null;
  /** Null as well when KAFKA_BROKERS is unset. */
  kafka: { brokers: string[]; topics: EnsuredTopic[] } | null;
}

function migrateSteps(only: string | undefined): Set<MigrateStep> {
  if (only === undefined) return new Set(MIGRATE_STEPS);
  const steps = list(only).map((step) => {
    const known = MIGRATE_STEPS.find((candidate) => candidate === step);
    if (!known) throw new UsageError(`--only: ${step} is not one of ${MIGRATE_STEPS.join(', ')}`);
    return known;
  });
  if (steps.length === 0) throw new UsageError(`--only needs one or more of ${MIGRATE_STEPS.join(', ')}`);
  return new Set(steps);
}

/** DATABASE_URL, else the running server's embedded Postgres, else one started for this command. */
async function connectPostgres(
  config: ManagementConfig,
): Promise<{ databaseUrl: string; embedded: EmbeddedPostgres | undefined }> {
  const databaseUrl = config.database.url ?? (await findRunningEmbeddedPostgres(config.dataDir));
  if (databaseUrl) return { databaseUrl, embedded: undefined };
  const embedded = await startEmbeddedPostgres(config.dataDir, { maxConnections: 2 });
  return { databaseUrl: embedded.url, embedded };
}

async function migratePostgres(config: ManagementConfig): Promise<MigrateResult['postgres']> {
  const { databaseUrl, embedded } = await connectPostgres(config);
  // A small pool: the migrations run on the migration lock's own connection.
  const dataSource = new DataSource(
    postgresDataSourceOptions({ url: databaseUrl, poolSize: 2, applicationName: 'admin-cli' }),
  );
  try {
    await dataSource.initialize();
    const { applied } = await migratePostgresDatabase(dataSource);
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

/** Postgres, then ClickHouse, then the Kafka topics: each step is safe to run again. */
async function migrate(config: ManagementConfig, only: string | undefined): Promise<MigrateResult> {
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

  const postgres = steps.has('postgres') ? await migratePostgres(config) : null;
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
async function waitForMigrations(
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

async function main(argv: string[]): Promise<unknown> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stderr.write(`${USAGE}\n`);
    return undefined;
  }
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      email: { type: 'string' },
      organization: { type: 'string' },
      project: { type: 'string' },
      scopes: { type: 'string' },
      organizations: { type: 'string' },
      projects: { type: 'string' },
      label: { type: 'string' },
      key: { type: 'string' },
      invite: { type: 'string' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      only: { type: 'string' },
      wait: { type: 'boolean' },
      timeout: { type: 'string' },
      level: { type: 'string' },
      app: { type: 'string' },
      global: { type: 'string' },
    },
  });
  const commands = [
    'bootstrap',
    'create-key',
    'revoke-key',
    'accept-invite',
    'set-plugins-access-level',
    'set-app-global',
    'migrate',
  ];
  if (!commands.includes(command)) throw new UsageError(`unknown command ${command}`);
  const global = values.global === undefined ? undefined : values.global.trim().toLowerCase();
  if (command === 'set-app-global' && global !== 'true' && global !== 'false') {
    throw new UsageError('--global must be true or false');
  }

  // SECURITY: the embedded Postgres and chDB this command may open write under DATA_DIR, which
  // holds events and key hashes: what they create is for this user only, as with `npm start`.
  process.umask(0o077);
  const config = loadManagementConfig();
  if (command === 'migrate' && values.wait) return waitForMigrations(config, values.only, values.timeout);
  if (command === 'migrate') return migrate(config, values.only);
  const { databaseUrl, embedded } = await connectPostgres(config);
  const context = await NestFactory.createApplicationContext(
    ManagementModule.forRoot({
      config: { ...config, database: { ...config.database, poolSize: 2 } },
      databaseUrl,
    }),
    { logger: false, abortOnError: false },
  );
  try {
    const bootstrap = context.get(BootstrapService);
    switch (command) {
      case 'bootstrap':
        return await bootstrap.bootstrap({
          email: required(values, 'email'),
          organizationName: values.organization,
          projectName: values.project,
        });
      case 'create-key': {
        const projects = list(values.projects).map((id) => {
          if (!/^\d+$/.test(id)) throw new UsageError(`--projects: ${id} is not a project id`);
          return Number(id);
        });
        const key = await bootstrap.createPersonalApiKey({
          email: required(values, 'email'),
          scopes: list(required(values, 'scopes')),
          label: values.label,
          scopedOrganizations: list(values.organizations),
          scopedTeams: projects,
        });
        return { personal_api_key: key };
      }
      case 'revoke-key':
        return { revoked: await bootstrap.revokePersonalApiKey(required(values, 'key')) };
      case 'accept-invite': {
        const { user, membership } = await context
          .get(InviteService)
          .accept(required(values, 'invite'), required(values, 'email'), {
            firstName: values['first-name'],
            lastName: values['last-name'],
          });
        return { user_uuid: user.uuid, organization_id: membership.organizationId, level: membership.level };
      }
      case 'set-plugins-access-level':
        return await bootstrap.setPluginsAccessLevel(
          required(values, 'organization'),
          required(values, 'level'),
        );
      case 'set-app-global':
        return await bootstrap.setAppGlobal(required(values, 'app'), global === 'true');
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } finally {
    await context.close();
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    if (error instanceof ApiError)
      process.stderr.write(`error: ${error.detail}${error.attr ? ` (${error.attr})` : ''}\n`);
    else if (
      error instanceof AdminError ||
      error instanceof ClickHouseMigrationError ||
      error instanceof QueueUnavailableError
    )
      process.stderr.write(`error: ${error.message}\n`);
    else if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}\n`);
    } else
      process.stderr.write(
        `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    process.exitCode = 1;
  },
);
