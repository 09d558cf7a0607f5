// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- a .d.ts of ambient types has nothing to import; this keeps it in any program that compiles this file
/// <reference path="./chdb-connection.d.ts" />
import { mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ClickHouseClient,
  ClickHouseClientConfigOptions,
  ClickHouseSettings,
  createClient,
  parseError,
} from '@clickhouse/client';
import type { ChdbConnection } from 'chdb/connection';
import {
  clientEventsWriter,
  embeddedEventsWriter,
  type EmbeddedRawInsert,
  type EventsWriter,
} from './events.repository';
import { assertDatabaseName } from './sql-identifier.util';

export type { ClickHouseClient } from '@clickhouse/client';

export interface ClickHouseConnectionConfig {
  url?: string;
  username?: string;
  password?: string;
  /** chDB has no per-client default database, so every query here names `<database>.<table>`. */
  database: string;
  dataPath?: string;
}

/**
 * One result shape on both engines: 64-bit integers as strings (chDB does not quote them), inserts
 * written when they return (chDB enables `async_insert`), DateTime64 in the format rows are written in.
 */
export const CLICKHOUSE_DEFAULT_SETTINGS: ClickHouseSettings = {
  output_format_json_quote_64bit_integers: 1,
  async_insert: 0,
  date_time_output_format: 'simple',
};

interface EmbeddedEngine {
  dataPath: string;
  openClients: number;
}

/** TRICKY: libchdb binds one data directory per process: a second one is refused here, not deep inside. */
let embeddedEngine: EmbeddedEngine | undefined;

interface ChdbModules {
  drainPending: typeof import('chdb').drainPending;
  createChdbConnection: typeof import('chdb/connection').createChdbConnection;
}

/** Loaded on first use: a ~500 MB native engine a process talking to a server never needs. */
function loadChdb(): ChdbModules {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports -- a synchronous, deferred load */
    const { drainPending } = require('chdb') as typeof import('chdb');
    const { createChdbConnection } = require('chdb/connection') as typeof import('chdb/connection');
    /* eslint-enable @typescript-eslint/no-require-imports */
    return { drainPending, createChdbConnection };
  } catch (error) {
    throw new ClickHouseEngineError(
      'The embedded ClickHouse (chDB) is not available in this installation ' +
        `(${error instanceof Error ? error.message.split('\n')[0] : String(error)}): set CLICKHOUSE_URL to a ClickHouse server`,
    );
  }
}
const embeddedClients = new WeakSet<ClickHouseClient>();

export class ClickHouseEngineError extends Error {
  readonly code: string | undefined;

  constructor(message: string, options?: { cause: unknown; code?: string }) {
    super(message, options && { cause: options.cause });
    this.name = 'ClickHouseEngineError';
    this.code = options?.code;
  }
}

const MIN_FREE_BYTES = 64 * 1024 * 1024;

/** chDB's own error says only `Failed to create connection`, so the directory is examined. */
function openFailureCause(dataPath: string): string {
  try {
    const { bavail, bsize } = statfsSync(dataPath);
    if (bavail * bsize < MIN_FREE_BYTES) {
      return `its filesystem has ${Math.floor((bavail * bsize) / (1024 * 1024))} MiB free`;
    }
    const probe = path.join(dataPath, `.write-check-${process.pid}`);
    writeFileSync(probe, '', { mode: 0o600 });
    rmSync(probe, { force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return 'its filesystem is read-only';
    if (code === 'EACCES' || code === 'EPERM') return 'this user may not write there';
    if (code === 'ENOSPC' || code === 'EDQUOT') return 'its filesystem is full';
  }
  return 'another process may have it open (chDB admits one process per data path), or its files may be damaged';
}

export function embeddedClickHouseDataPath(): string | undefined {
  return embeddedEngine?.dataPath;
}

export function isEmbeddedClickHouse(client: ClickHouseClient): boolean {
  return embeddedClients.has(client);
}

function rawInsertOn(connection: ChdbConnection): EmbeddedRawInsert {
  return async (params) => {
    try {
      await connection.chdb.rawInsert(params);
    } catch (error) {
      if (!(error instanceof Error)) throw error;
      const mapped = parseError(error.message);
      mapped.cause = error;
      throw mapped;
    }
  };
}

export interface OpenedClickHouse {
  client: ClickHouseClient;
  events: EventsWriter;
}

export function openClickHouse(config: ClickHouseConnectionConfig): OpenedClickHouse {
  assertDatabaseName(config.database);
  if (config.url) {
    const client = createClient({
      url: config.url,
      username: config.username,
      password: config.password,
      database: config.database,
      application: 'hogbase',
      clickhouse_settings: CLICKHOUSE_DEFAULT_SETTINGS,
    });
    return { client, events: clientEventsWriter(client, config.database) };
  }
  const { client, connection } = createEmbeddedClient(config);
  return { client, events: embeddedEventsWriter(rawInsertOn(connection), config.database) };
}

export function createClickHouse(config: ClickHouseConnectionConfig): ClickHouseClient {
  return openClickHouse(config).client;
}

function createEmbeddedClient(config: ClickHouseConnectionConfig): {
  client: ClickHouseClient;
  connection: ChdbConnection;
} {
  const requested = config.dataPath ? path.resolve(config.dataPath) : embeddedEngine?.dataPath;
  if (!requested) {
    throw new ClickHouseEngineError(
      'The embedded ClickHouse (chDB) needs a data path: set CLICKHOUSE_URL for a server, or give dataPath',
    );
  }
  if (embeddedEngine && embeddedEngine.dataPath !== requested) {
    throw new ClickHouseEngineError(
      `The embedded ClickHouse (chDB) of this process is bound to ${embeddedEngine.dataPath} and cannot ` +
        `also open ${requested}: chDB runs one engine per process on one data path. Share that path ` +
        `(and isolate by database name), or close every embedded client first.`,
    );
  }
  // Owner only: the events are there (files chDB creates inside follow the umask, see data-dir.util.ts).
  mkdirSync(requested, { recursive: true, mode: 0o700 });
  const chdb = loadChdb();
  let connection: ChdbConnection;
  try {
    connection = chdb.createChdbConnection({ path: requested });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'CHDB_CONNECTION') throw error;
    throw new ClickHouseEngineError(
      `The embedded ClickHouse (chDB) could not open ${requested}: ${openFailureCause(requested)}`,
      { cause: error, code },
    );
  }
  const client = createClient({
    // NOTE: chdb/connection implements @clickhouse/client-common 1.23.0's Connection, which the client
    // vendors as its own copy with a few drifted settings keys: the same contract, unrelated types.
    connection: connection as unknown as ClickHouseClientConfigOptions['connection'],
    database: config.database,
    application: 'hogbase',
    clickhouse_settings: CLICKHOUSE_DEFAULT_SETTINGS,
  });
  embeddedEngine = embeddedEngine ?? { dataPath: requested, openClients: 0 };
  embeddedEngine.openClients += 1;
  embeddedClients.add(client);
  return { client, connection };
}

export async function closeClickHouse(client: ClickHouseClient): Promise<void> {
  if (!embeddedClients.delete(client)) {
    await client.close();
    return;
  }
  await client.close();
  if (!embeddedEngine) return;
  embeddedEngine.openClients -= 1;
  if (embeddedEngine.openClients > 0) return;
  // close() defers the native teardown while an aborted query runs; the data path is free only after.
  await loadChdb().drainPending();
  if (embeddedEngine?.openClients === 0) embeddedEngine = undefined;
}
