import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { assertClusterName, assertDatabaseName } from './sql-identifier.util';

/**
 * No transactions or locks in ClickHouse: concurrent migrations are safe because every statement is
 * idempotent (a test checks), duplicate records collapse, and records are re-read before each and after.
 */
export const CLICKHOUSE_MIGRATIONS_DIR = path.join(__dirname, '../migrations');

export type ClickHouseMigrationVariant = 'single-node' | 'cluster';

export interface ClickHouseMigration {
  version: number;
  name: string;
  /** sha256 (hex) of the file as written, before placeholders are filled in. */
  checksum: string;
  sql: string;
}

export interface MigrateClickHouseOptions {
  database: string;
  /** The cluster variant runs `ON CLUSTER` it. */
  cluster?: string;
  migrationsDir?: string;
}

export interface MigrateClickHouseResult {
  applied: string[];
  alreadyApplied: string[];
}

export class ClickHouseMigrationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClickHouseMigrationError';
  }
}

const MIGRATION_FILE = /^(\d{3,})-[a-z0-9]+(?:-[a-z0-9]+)*\.sql$/;
const MIGRATIONS_TABLE = 'schema_migrations';

export async function loadClickHouseMigrations(
  variant: ClickHouseMigrationVariant,
  migrationsDir: string = CLICKHOUSE_MIGRATIONS_DIR,
): Promise<ClickHouseMigration[]> {
  const directory = path.join(migrationsDir, variant);
  const fileNames = (await readdir(directory)).filter((fileName) => fileName.endsWith('.sql')).sort();
  const migrations: ClickHouseMigration[] = [];
  const byVersion = new Map<number, string>();
  for (const name of fileNames) {
    const match = MIGRATION_FILE.exec(name);
    if (!match) {
      throw new ClickHouseMigrationError(
        `ClickHouse migration ${path.join(directory, name)} is not named NNN-verb-object.sql`,
      );
    }
    const version = Number(match[1]);
    const clash = byVersion.get(version);
    if (clash) {
      throw new ClickHouseMigrationError(`ClickHouse migrations ${clash} and ${name} have the same version`);
    }
    byVersion.set(version, name);
    const sql = await readFile(path.join(directory, name), 'utf8');
    migrations.push({ version, name, checksum: createHash('sha256').update(sql).digest('hex'), sql });
  }
  return migrations.sort((left, right) => left.version - right.version);
}

/**
 * Statements end with `;` at the end of a line; whole-line `--` comments are dropped. Server macros
 * such as `{shard}` and `{replica}` are left for ClickHouse.
 */
export function renderClickHouseMigration(
  sql: string,
  target: { database: string; cluster?: string },
): string[] {
  const database = assertDatabaseName(target.database);
  const cluster = target.cluster === undefined ? undefined : assertClusterName(target.cluster);
  const rendered = sql
    .split('\n')
    .filter((line) => !/^\s*--/.test(line))
    .join('\n')
    .replace(/\{(database|on_cluster|cluster_name)\}/g, (placeholder, name: string) => {
      if (name === 'database') return database;
      if (cluster === undefined) {
        if (name === 'on_cluster') return '';
        throw new ClickHouseMigrationError(`${placeholder} is used in a migration run without a cluster`);
      }
      return name === 'on_cluster' ? `ON CLUSTER '${cluster}'` : cluster;
    });
  return rendered
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);
}

function migrationsTableSql(database: string, cluster: string | undefined): string {
  const columns = `(
    version UInt32,
    name String,
    checksum String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
  )`;
  // One replicated table across all shards (no {shard}): the record is visible from every node.
  const engine = cluster
    ? `ReplicatedReplacingMergeTree('/clickhouse/tables/${database}/${MIGRATIONS_TABLE}', '{replica}', applied_at)`
    : 'ReplacingMergeTree(applied_at)';
  const onCluster = cluster ? ` ON CLUSTER '${cluster}'` : '';
  return `CREATE TABLE IF NOT EXISTS ${database}.${MIGRATIONS_TABLE}${onCluster} ${columns} ENGINE = ${engine} ORDER BY version`;
}

interface AppliedMigration {
  version: number;
  name: string;
  /** More than one means two different files ran. */
  checksums: string[];
}

async function readApplied(
  client: ClickHouseClient,
  database: string,
): Promise<Map<number, AppliedMigration>> {
  const result = await client.query({
    query: `SELECT version, any(name) AS name, groupUniqArray(checksum) AS checksums
            FROM ${database}.${MIGRATIONS_TABLE} GROUP BY version`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ version: number; name: string; checksums: string[] }>();
  return new Map(rows.map((row) => [Number(row.version), { ...row, version: Number(row.version) }]));
}

function assertUnchanged(migration: ClickHouseMigration, applied: AppliedMigration, database: string): void {
  if (applied.checksums.length === 1 && applied.checksums[0] === migration.checksum) return;
  throw new ClickHouseMigrationError(
    `ClickHouse migration ${migration.name} was applied to database ${database} as ${applied.name} with checksum ` +
      `${applied.checksums.join(', ')}, but the file now has checksum ${migration.checksum}. ` +
      'A migration that has run must never change: restore the file and add a new migration instead.',
  );
}

/** Refuses to run when an applied file has changed. Safe to run again, from several processes at once. */
export async function migrateClickHouse(
  client: ClickHouseClient,
  options: MigrateClickHouseOptions,
): Promise<MigrateClickHouseResult> {
  const database = assertDatabaseName(options.database);
  const cluster = options.cluster === undefined ? undefined : assertClusterName(options.cluster);
  const migrations = await loadClickHouseMigrations(
    cluster ? 'cluster' : 'single-node',
    options.migrationsDir ?? CLICKHOUSE_MIGRATIONS_DIR,
  );

  await client.command({
    query: `CREATE DATABASE IF NOT EXISTS ${database}${cluster ? ` ON CLUSTER '${cluster}'` : ''}`,
  });
  await client.command({ query: migrationsTableSql(database, cluster) });

  let applied = await readApplied(client, database);
  for (const migration of migrations) {
    const record = applied.get(migration.version);
    if (record) assertUnchanged(migration, record, database);
  }

  const result: MigrateClickHouseResult = { applied: [], alreadyApplied: [] };
  for (const migration of migrations) {
    if (!applied.has(migration.version)) {
      applied = await readApplied(client, database);
    }
    const record = applied.get(migration.version);
    if (record) {
      assertUnchanged(migration, record, database);
      result.alreadyApplied.push(migration.name);
      continue;
    }
    for (const statement of renderClickHouseMigration(migration.sql, { database, cluster })) {
      try {
        await client.command({ query: statement });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ClickHouseMigrationError(
          `ClickHouse migration ${migration.name} failed on database ${database}: ${reason}`,
          { cause: error },
        );
      }
    }
    await client.insert({
      table: `${database}.${MIGRATIONS_TABLE}`,
      values: [{ version: migration.version, name: migration.name, checksum: migration.checksum }],
      format: 'JSONEachRow',
      clickhouse_settings: { async_insert: 0 },
    });
    result.applied.push(migration.name);
  }

  applied = await readApplied(client, database);
  for (const migration of migrations) {
    const record = applied.get(migration.version);
    if (!record) {
      throw new ClickHouseMigrationError(
        `ClickHouse migration ${migration.name} is not recorded after running`,
      );
    }
    assertUnchanged(migration, record, database);
  }
  return result;
}

/** Reads only, so a process may wait on it while another one migrates. */
export async function pendingClickHouseMigrations(
  client: ClickHouseClient,
  options: MigrateClickHouseOptions,
): Promise<string[]> {
  const database = assertDatabaseName(options.database);
  const migrations = await loadClickHouseMigrations(
    options.cluster === undefined ? 'single-node' : 'cluster',
    options.migrationsDir ?? CLICKHOUSE_MIGRATIONS_DIR,
  );
  const exists = await client.query({
    query:
      'SELECT count() AS found FROM system.tables WHERE database = {database:String} AND name = {table:String}',
    query_params: { database, table: MIGRATIONS_TABLE },
    format: 'JSONEachRow',
  });
  const [{ found }] = await exists.json<{ found: string }>();
  if (Number(found) === 0) return migrations.map((migration) => migration.name);
  const applied = await readApplied(client, database);
  return migrations.filter((migration) => !applied.has(migration.version)).map((migration) => migration.name);
}
