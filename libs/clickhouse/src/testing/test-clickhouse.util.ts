import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ClickHouseClient, closeClickHouse, openClickHouse } from '../clickhouse.client';
import type { EventsWriter } from '../events.repository';
import { migrateClickHouse } from '../migration-runner.util';

export interface TestClickHouse {
  client: ClickHouseClient;
  database: string;
  events: EventsWriter;
  drop(): Promise<void>;
}

export interface CreateTestClickHouseOptions {
  migrate?: boolean;
}

const DATA_PATH_PREFIX = 'hogbase-chdb-';

/** Helpers that create or drop databases touch nothing whose name lacks `test`. */
export function assertTestClickHouseDatabase(name: string): void {
  if (!name.includes('test')) {
    throw new Error(
      `Refusing to create or drop ClickHouse database "${name}": its name does not contain "test"`,
    );
  }
}

/** One per Jest worker: chDB is one engine per process, so test files isolate by database name. */
export function testClickHouseDataPath(): string {
  return path.join(tmpdir(), `${DATA_PATH_PREFIX}${process.pid}`);
}

let staleDataPathsRemoved = false;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A Jest worker's data path stays behind when it exits; the next run removes those of dead pids. */
function removeStaleDataPaths(): void {
  if (staleDataPathsRemoved) return;
  staleDataPathsRemoved = true;
  for (const entry of readdirSync(tmpdir())) {
    const pid = Number(entry.slice(DATA_PATH_PREFIX.length));
    if (
      !entry.startsWith(DATA_PATH_PREFIX) ||
      !Number.isInteger(pid) ||
      pid === process.pid ||
      isAlive(pid)
    ) {
      continue;
    }
    rmSync(path.join(tmpdir(), entry), { recursive: true, force: true });
  }
}

/** A chDB client on a new, migrated database for one test file. Call `drop()` in `afterAll`. */
export async function createTestClickHouse(
  options: CreateTestClickHouseOptions = {},
): Promise<TestClickHouse> {
  removeStaleDataPaths();
  const database = `test_clickhouse_${process.pid}_${randomBytes(4).toString('hex')}`;
  assertTestClickHouseDatabase(database);
  const { client, events } = openClickHouse({ database, dataPath: testClickHouseDataPath() });
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    try {
      assertTestClickHouseDatabase(database);
      await client.command({ query: `DROP DATABASE IF EXISTS ${database} SYNC` });
    } finally {
      await closeClickHouse(client);
    }
  };
  try {
    if (options.migrate === false) {
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    } else {
      await migrateClickHouse(client, { database });
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return { client, database, events, drop };
}
