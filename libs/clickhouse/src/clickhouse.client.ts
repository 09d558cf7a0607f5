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
  /** HTTP(S) URL of a ClickHouse server. When absent, the embedded chDB engine is used. */
  url?: string;
  username?: string;
  password?: string;
  /**
   * The database this client works in. The HTTP connection uses it for unqualified names; the chDB
   * connection has no per-client default database, so every query in this lib names
   * `<database>.<table>` explicitly and works the same on both.
   */
  database: string;
  /** chDB data directory. Required for the first embedded client of the process, optional after. */
  dataPath?: string;
}

/**
 * Applied to every query on both engines, so that results have one shape whatever the connection.
 *
 * - `output_format_json_quote_64bit_integers`: a ClickHouse server quotes (U)Int64 in JSON formats
 *   by default and chDB does not. We quote on both: `count()`, `team_id` and offsets come back as
 *   decimal strings, never as numbers that silently lose precision past 2^53. Callers convert
 *   (`Number(row.count)`) where the value is known to be small.
 * - `async_insert`: chDB enables it by default. Ingestion commits Kafka offsets only after the
 *   insert, so an insert must be written when it returns, not buffered.
 * - `date_time_output_format`: DateTime64 come back as `YYYY-MM-DD hh:mm:ss.ffffff` (UTC columns),
 *   the same format we insert.
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

/**
 * TRICKY: libchdb binds ONE data directory per process. Every embedded client therefore opens its
 * own native connection on the same path (connections on one path coexist and run in parallel),
 * and this registry refuses a second path instead of letting the native layer fail later with a
 * less helpful message. Closing one client closes only its connection; the path is released when
 * the last embedded client is closed.
 *
 * NOTE: under Jest each test file gets a fresh module registry while the native engine stays
 * per worker process, so tests use one data path per worker and isolate by database name.
 */
let embeddedEngine: EmbeddedEngine | undefined;

interface ChdbModules {
  drainPending: typeof import('chdb').drainPending;
  createChdbConnection: typeof import('chdb/connection').createChdbConnection;
}

/**
 * chDB is loaded on first use, not with this module: loading it maps a ~500 MB native engine, which
 * a process talking to a ClickHouse server never needs, and the container image may leave it out.
 */
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
/** The embedded clients open, so that closing the last one releases the engine's data path. */
const embeddedClients = new WeakSet<ClickHouseClient>();

export class ClickHouseEngineError extends Error {
  /** `CHDB_CONNECTION` when chDB could not open its data path (as chDB's own error says). */
  readonly code: string | undefined;

  constructor(message: string, options?: { cause: unknown; code?: string }) {
    super(message, options && { cause: options.cause });
    this.name = 'ClickHouseEngineError';
    this.code = options?.code;
  }
}

const MIN_FREE_BYTES = 64 * 1024 * 1024;

/**
 * Why chDB most likely could not open `dataPath`: its own error says only `Failed to create
 * connection` (the cause goes to stderr), so the directory is examined.
 */
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

/** The data path the embedded engine of this process is bound to, if an embedded client is open. */
export function embeddedClickHouseDataPath(): string | undefined {
  return embeddedEngine?.dataPath;
}

export function isEmbeddedClickHouse(client: ClickHouseClient): boolean {
  return embeddedClients.has(client);
}

/** chDB's raw insert on `connection`, failing with ClickHouse's errors (parseError) as the client does. */
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

/** A client, and the way event rows reach its engine: chosen here, where the engine is known. */
export interface OpenedClickHouse {
  client: ClickHouseClient;
  /** The events table of the config's database, written as this engine takes rows best. */
  events: EventsWriter;
}

/**
 * createClickHouse, with the events writer of the engine it opened: the client's insert on a
 * server, chDB's raw insert on the embedded engine.
 */
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

/**
 * A `@clickhouse/client` client: HTTP to the server at `url`, or the in-process chDB engine under
 * `dataPath`. The SQL is the same for both; close it with `closeClickHouse`.
 */
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
  // Owner only: the events are there. (Files chDB creates inside follow the process umask.)
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
    // NOTE: chdb/connection implements the Connection of @clickhouse/client-common 1.23.0, which the
    // client now vendors as its own copy: the same contract, but the settings types have drifted
    // by a few keys, so the compiler sees two unrelated types.
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

/**
 * Closes one client. For chDB this closes that client's own connection only: other clients on the
 * shared engine keep working. Safe to call twice.
 */
export async function closeClickHouse(client: ClickHouseClient): Promise<void> {
  if (!embeddedClients.delete(client)) {
    await client.close();
    return;
  }
  await client.close();
  if (!embeddedEngine) return;
  embeddedEngine.openClients -= 1;
  if (embeddedEngine.openClients > 0) return;
  // close() defers the native teardown while an aborted query is still running; the engine only
  // lets go of its data path (so another one may be opened) once that has finished.
  await loadChdb().drainPending();
  if (embeddedEngine?.openClients === 0) embeddedEngine = undefined;
}
