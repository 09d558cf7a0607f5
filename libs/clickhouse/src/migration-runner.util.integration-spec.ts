import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { closeClickHouse, createClickHouse } from './clickhouse.client';
import {
  CLICKHOUSE_MIGRATIONS_DIR,
  ClickHouseMigrationError,
  loadClickHouseMigrations,
  migrateClickHouse,
  renderClickHouseMigration,
} from './migration-runner.util';
import { createTestClickHouse, TestClickHouse } from './testing';

async function queryRows<T>(clickHouse: TestClickHouse, query: string): Promise<T[]> {
  const result = await clickHouse.client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}

describe('migrateClickHouse', () => {
  let clickHouse: TestClickHouse;
  let migrationsCopy: string;

  beforeEach(async () => {
    clickHouse = await createTestClickHouse({ migrate: false });
    migrationsCopy = await mkdtemp(path.join(tmpdir(), 'hogbase-clickhouse-migrations-'));
    await cp(CLICKHOUSE_MIGRATIONS_DIR, migrationsCopy, { recursive: true });
  });

  afterEach(async () => {
    await clickHouse.drop();
    await rm(migrationsCopy, { recursive: true, force: true });
  });

  it('creates the events table and records every migration with its checksum', async () => {
    const migrations = await loadClickHouseMigrations('single-node');
    const result = await migrateClickHouse(clickHouse.client, { database: clickHouse.database });

    expect(result).toEqual({ applied: migrations.map((migration) => migration.name), alreadyApplied: [] });
    const recorded = await queryRows<{ version: number; name: string; checksum: string }>(
      clickHouse,
      `SELECT version, name, checksum FROM ${clickHouse.database}.schema_migrations FINAL ORDER BY version`,
    );
    expect(recorded).toEqual(migrations.map(({ version, name, checksum }) => ({ version, name, checksum })));
    const [table] = await queryRows<{ engine: string; sorting_key: string; partition_key: string }>(
      clickHouse,
      `SELECT engine, sorting_key, partition_key FROM system.tables
       WHERE database = '${clickHouse.database}' AND name = 'events'`,
    );
    expect(table).toEqual({
      engine: 'ReplacingMergeTree',
      sorting_key: 'team_id, toDate(timestamp), uuid',
      partition_key: 'toYYYYMM(timestamp)',
    });
    const columns = await queryRows<{ name: string; type: string }>(
      clickHouse,
      `SELECT name, type FROM system.columns WHERE database = '${clickHouse.database}' AND table = 'events'
       ORDER BY position`,
    );
    expect(columns.slice(0, 11)).toEqual([
      { name: 'uuid', type: 'UUID' },
      { name: 'event', type: 'String' },
      { name: 'properties', type: 'String' },
      { name: 'timestamp', type: "DateTime64(6, 'UTC')" },
      { name: 'team_id', type: 'Int64' },
      { name: 'distinct_id', type: 'String' },
      { name: 'elements_chain', type: 'String' },
      { name: 'created_at', type: "DateTime64(6, 'UTC')" },
      { name: 'person_id', type: 'UUID' },
      { name: 'person_properties', type: 'String' },
      { name: 'person_created_at', type: "DateTime64(3, 'UTC')" },
    ]);
    expect(columns.map((column) => column.name)).toEqual(
      expect.arrayContaining([
        '$group_0',
        '$group_1',
        '$group_2',
        '$group_3',
        '$group_4',
        '_timestamp',
        '_offset',
      ]),
    );
  });

  it('does nothing the second time and records nothing twice', async () => {
    const first = await migrateClickHouse(clickHouse.client, { database: clickHouse.database });
    const second = await migrateClickHouse(clickHouse.client, { database: clickHouse.database });

    expect(second).toEqual({ applied: [], alreadyApplied: first.applied });
    const [{ records }] = (await queryRows<{ records: string }>(
      clickHouse,
      `SELECT count() AS records FROM ${clickHouse.database}.schema_migrations`,
    )) as [{ records: string }];
    expect(Number(records)).toBe(first.applied.length);
  });

  it('lets two processes migrate the same database at the same moment', async () => {
    // Two clients are two connections to the engine, as two processes would have to a server.
    const other = createClickHouse({ database: clickHouse.database });
    const results = await Promise.all([
      migrateClickHouse(clickHouse.client, { database: clickHouse.database }),
      migrateClickHouse(other, { database: clickHouse.database }),
    ]).finally(() => closeClickHouse(other));

    const migrations = await loadClickHouseMigrations('single-node');
    for (const result of results) {
      expect([...result.applied, ...result.alreadyApplied].sort()).toEqual(
        migrations.map((migration) => migration.name),
      );
    }
    const recorded = await queryRows<{ version: number }>(
      clickHouse,
      `SELECT version FROM ${clickHouse.database}.schema_migrations FINAL`,
    );
    expect(recorded).toHaveLength(migrations.length);
    await expect(migrateClickHouse(clickHouse.client, { database: clickHouse.database })).resolves.toEqual({
      applied: [],
      alreadyApplied: migrations.map((migration) => migration.name),
    });
  });

  it('applies only a migration added since the last run', async () => {
    const options = { database: clickHouse.database, migrationsDir: migrationsCopy };
    const first = await migrateClickHouse(clickHouse.client, options);
    await writeFile(
      path.join(migrationsCopy, 'single-node', '900-add-events-test-column.sql'),
      "ALTER TABLE {database}.events ADD COLUMN IF NOT EXISTS test_column String DEFAULT '';\n",
    );

    await expect(migrateClickHouse(clickHouse.client, options)).resolves.toEqual({
      applied: ['900-add-events-test-column.sql'],
      alreadyApplied: first.applied,
    });
    const columns = await queryRows<{ name: string }>(
      clickHouse,
      `SELECT name FROM system.columns WHERE database = '${clickHouse.database}' AND table = 'events'
       AND name = 'test_column'`,
    );
    expect(columns).toHaveLength(1);
  });

  it('refuses to run when a migration that was applied has changed, before applying anything new', async () => {
    const options = { database: clickHouse.database, migrationsDir: migrationsCopy };
    await migrateClickHouse(clickHouse.client, options);
    const [first] = await loadClickHouseMigrations('single-node', migrationsCopy);
    await writeFile(path.join(migrationsCopy, 'single-node', first.name), `${first.sql}\n-- edited\n`);
    await writeFile(
      path.join(migrationsCopy, 'single-node', '900-create-test-table.sql'),
      'CREATE TABLE IF NOT EXISTS {database}.never_created (id UInt8) ENGINE = MergeTree ORDER BY id;\n',
    );

    const attempt = migrateClickHouse(clickHouse.client, options);
    await expect(attempt).rejects.toThrow(ClickHouseMigrationError);
    await expect(attempt).rejects.toThrow(
      new RegExp(`${first.name} was applied .* but the file now has checksum`),
    );
    const tables = await queryRows<{ name: string }>(
      clickHouse,
      `SELECT name FROM system.tables WHERE database = '${clickHouse.database}' AND name = 'never_created'`,
    );
    expect(tables).toEqual([]);
  });

  it('names the migration and the database when a statement fails, and records nothing for it', async () => {
    const options = { database: clickHouse.database, migrationsDir: migrationsCopy };
    await writeFile(
      path.join(migrationsCopy, 'single-node', '900-break-things.sql'),
      'CREATE TABLE nonsense;\n',
    );

    await expect(migrateClickHouse(clickHouse.client, options)).rejects.toThrow(
      `ClickHouse migration 900-break-things.sql failed on database ${clickHouse.database}`,
    );
    const recorded = await queryRows<{ version: number }>(
      clickHouse,
      `SELECT version FROM ${clickHouse.database}.schema_migrations FINAL WHERE version = 900`,
    );
    expect(recorded).toEqual([]);
  });

  it('refuses a migration file that is not named NNN-verb-object.sql', async () => {
    await writeFile(path.join(migrationsCopy, 'single-node', 'add_things.sql'), 'SELECT 1;\n');

    await expect(
      migrateClickHouse(clickHouse.client, { database: clickHouse.database, migrationsDir: migrationsCopy }),
    ).rejects.toThrow(/is not named NNN-verb-object\.sql/);
  });

  it('refuses a database name that is not a plain identifier', async () => {
    await expect(migrateClickHouse(clickHouse.client, { database: 'test`; DROP' })).rejects.toThrow(
      /Invalid ClickHouse database name/,
    );
  });
});

describe('the shipped ClickHouse migrations', () => {
  let clickHouse: TestClickHouse;

  beforeAll(async () => {
    clickHouse = await createTestClickHouse({ migrate: false });
  });

  afterAll(async () => {
    await clickHouse.drop();
  });

  it('have the same versions in the single-node and the cluster variant', async () => {
    const singleNode = await loadClickHouseMigrations('single-node');
    const cluster = await loadClickHouseMigrations('cluster');

    expect(singleNode.length).toBeGreaterThan(0);
    expect(cluster.map((migration) => migration.name)).toEqual(singleNode.map((migration) => migration.name));
  });

  it('are made of idempotent statements only, so that concurrent runners cannot fail each other', async () => {
    for (const variant of ['single-node', 'cluster'] as const) {
      for (const migration of await loadClickHouseMigrations(variant)) {
        for (const statement of renderClickHouseMigration(migration.sql, {
          database: 'hogbase',
          cluster: 'main',
        })) {
          expect(statement).toMatch(/\bIF (NOT )?EXISTS\b/);
        }
      }
    }
  });

  it('parse as ClickHouse SQL in the cluster variant, ON CLUSTER with the servers macros kept', async () => {
    const rendered: string[] = [];
    for (const migration of await loadClickHouseMigrations('cluster')) {
      const statements = renderClickHouseMigration(migration.sql, {
        database: 'hogbase',
        cluster: 'posthog',
      });
      for (const statement of statements) {
        expect(statement).toContain("ON CLUSTER 'posthog'");
        const result = await clickHouse.client.query({
          query: 'SELECT formatQuery({statement:String}) AS formatted',
          query_params: { statement },
          format: 'JSONEachRow',
        });
        const [row] = await result.json<{ formatted: string }>();
        expect(row?.formatted).toContain('ON CLUSTER posthog');
      }
      rendered.push(...statements);
    }
    expect(rendered.join('\n')).toContain("'/clickhouse/tables/{shard}/hogbase/events', '{replica}'");
  });
});
