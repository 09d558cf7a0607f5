import { Client, DatabaseError, escapeIdentifier } from 'pg';
import {
  NonRetryableExportError,
  type DestinationFactory,
  type DestinationWriter,
  type ExportChunk,
  type ExportRunInfo,
  type ExportedEventRow,
  type WriteResult,
} from '../destination.types';
import { DestinationConfigReader, JsonLinesReader } from './destination.util';

export interface PostgresDestinationConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  schema: string;
  tableName: string;
  hasSelfSignedCert: boolean;
}

/**
 * PostHog's events table for Postgres (`insert_into_postgres_activity`, events model): the legacy
 * plugin-compatible columns, names and types as PostHog creates them.
 */
const EVENT_COLUMNS = [
  ['uuid', 'VARCHAR(200)', 'text'],
  ['event', 'VARCHAR(200)', 'text'],
  ['properties', 'JSONB', 'jsonb'],
  ['elements', 'JSONB', 'jsonb'],
  ['set', 'JSONB', 'jsonb'],
  ['set_once', 'JSONB', 'jsonb'],
  ['distinct_id', 'VARCHAR(200)', 'text'],
  ['team_id', 'INTEGER', 'integer'],
  ['ip', 'VARCHAR(200)', 'text'],
  ['site_url', 'VARCHAR(200)', 'text'],
  ['timestamp', 'TIMESTAMP WITH TIME ZONE', 'timestamptz'],
] as const;

type ColumnValues = (string | number | null)[][];

/** Rows per INSERT statement (a chunk is several statements in one transaction). */
const STATEMENT_MAX_ROWS = 1_000;
/** Row bytes per INSERT statement, so a chunk of large events never builds a huge statement. */
const STATEMENT_MAX_BYTES = 8 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 30_000;

/** SQLSTATEs that trying again cannot fix: the run fails instead of retrying. */
const NON_RETRYABLE_SQLSTATES: Record<string, string> = {
  '28P01': 'the credentials were refused',
  '28000': 'the connection was not authorized',
  '3D000': 'the database does not exist',
  '3F000': 'the schema does not exist',
  '42501': 'permission denied',
  '42P01': 'the table does not exist',
  '42703': 'the table lacks a column the export writes',
  '42804': 'a column of the table has another type than the export writes',
  '42P10': 'the table has no unique index on uuid',
  '22001': 'a value is too long for its column',
  '23502': 'a column of the table refuses NULL',
  '53100': 'the disk is full',
};

/** Node TLS errors of a certificate that does not verify: retrying does not change the certificate. */
const CERTIFICATE_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export function parsePostgresDestinationConfig(config: Record<string, unknown>): PostgresDestinationConfig {
  const reader = new DestinationConfigReader('Postgres', config);
  return {
    host: reader.requiredString('host'),
    port: reader.positiveInteger('port', 5432),
    database: reader.requiredString('database'),
    user: reader.requiredString('user'),
    password: reader.optionalString('password', '') ?? '',
    schema: reader.optionalString('schema', 'public') || 'public',
    tableName: reader.requiredString('table_name'),
    hasSelfSignedCert: reader.boolean('has_self_signed_cert', false),
  };
}

/**
 * Upserts the events of a run into a Postgres table, one transaction per chunk, so a chunk written
 * twice (a resumed or retried run) leaves one row per event.
 */
export class PostgresDestinationWriter implements DestinationWriter {
  readonly format = 'JSONEachRow';
  readonly resumable = true;
  readonly maxChunkRows = 10_000;

  private client: Client | undefined;
  private tableReady = false;
  private readonly qualifiedTable: string;
  private readonly insertSql: string;

  constructor(
    private readonly config: PostgresDestinationConfig,
    private readonly run: ExportRunInfo,
  ) {
    this.qualifiedTable = `${escapeIdentifier(config.schema)}.${escapeIdentifier(config.tableName)}`;
    this.insertSql = buildUpsertSql(this.qualifiedTable);
  }

  async write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    const client = await this.connect();
    const reader = new JsonLinesReader(chunk.body);
    let inTransaction = false;
    try {
      await this.ensureTable(client);
      await client.query('BEGIN');
      inTransaction = true;
      let batch = new StatementBatch();
      for await (const row of reader.rows()) {
        batch.add(row);
        if (batch.size >= STATEMENT_MAX_ROWS || batch.bytes >= STATEMENT_MAX_BYTES) {
          signal.throwIfAborted();
          await client.query(this.insertSql, batch.columns());
          batch = new StatementBatch();
        }
      }
      signal.throwIfAborted();
      if (batch.size > 0) await client.query(this.insertSql, batch.columns());
      await client.query('COMMIT');
      inTransaction = false;
      return { bytes: reader.bytesRead };
    } catch (error) {
      chunk.body.destroy();
      if (inTransaction) {
        // A dead connection cannot roll back, and the server drops its transaction anyway.
        await client.query('ROLLBACK').catch(() => undefined);
      }
      // The connection may be dead (a reset, a terminated backend): a next write opens a new one.
      await this.close();
      if (signal.aborted) throw signal.reason;
      throw this.toExportError(error);
    }
  }

  async finish(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    await this.close();
  }

  async abort(): Promise<void> {
    await this.close();
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    const client = new Client({
      host: this.config.host,
      port: this.config.port,
      database: this.config.database,
      user: this.config.user,
      password: this.config.password,
      // PostHog connects with sslmode=require, and skips verification for a self-signed cert.
      ssl: { rejectUnauthorized: !this.config.hasSelfSignedCert },
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: `hogbase batch export ${this.run.runId}`.slice(0, 63),
      // Timestamps without an offset are read as UTC, whatever the server's default zone.
      options: '-c TimeZone=UTC',
    });
    // NOTE: without a listener, a connection the server drops between queries would crash the
    // process; the failed query that follows reports it instead.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw this.toExportError(error);
    }
    this.client = client;
    return client;
  }

  private async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }

  /**
   * Creates the table when missing, and makes sure it has the unique index on uuid the upsert needs
   * (PostHog's table has none). Serialized by an advisory lock: two runs writing the same table may
   * start together.
   */
  private async ensureTable(client: Client): Promise<void> {
    if (this.tableReady) return;
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.qualifiedTable]);
      const existing = await client.query<{ exists: boolean }>(
        'SELECT to_regclass($1) IS NOT NULL AS exists',
        [this.qualifiedTable],
      );
      if (!existing.rows[0]?.exists) {
        const columns = EVENT_COLUMNS.map(([name, type]) => `${escapeIdentifier(name)} ${type}`).join(', ');
        await client.query(`CREATE TABLE ${this.qualifiedTable} (${columns})`);
      }
      const index = await client.query<{ exists: boolean }>(
        `SELECT EXISTS (
           SELECT 1 FROM pg_index i
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
           WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indimmediate AND i.indisvalid
             AND i.indnkeyatts = 1 AND i.indpred IS NULL AND i.indexprs IS NULL AND a.attname = 'uuid'
         ) AS exists`,
        [this.qualifiedTable],
      );
      if (!index.rows[0]?.exists) await this.createUuidIndex(client);
      await client.query('COMMIT');
      this.tableReady = true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  private async createUuidIndex(client: Client): Promise<void> {
    const statement = `CREATE UNIQUE INDEX ON ${this.qualifiedTable} (${escapeIdentifier('uuid')})`;
    try {
      // NOTE: on a large existing table this blocks other writers while the index builds, once.
      await client.query(statement);
    } catch (error) {
      const code = sqlState(error);
      const reason =
        code === '23505'
          ? 'it holds several rows with the same uuid'
          : code === '42501'
            ? `user "${this.config.user}" may not create it (only the table's owner may)`
            : code === '42703'
              ? 'the table has no uuid column'
              : undefined;
      if (reason === undefined) throw error;
      throw new NonRetryableExportError(
        `Postgres table ${this.qualifiedTable} has no unique index on uuid, which the export needs to ` +
          `write each event once, and it cannot be created: ${reason}. Create it with: ${statement}`,
        { cause: error },
      );
    }
  }

  private toExportError(error: unknown): Error {
    if (error instanceof NonRetryableExportError) return error;
    const target = `${this.config.host}:${this.config.port}/${this.config.database} (${this.qualifiedTable})`;
    const code = sqlState(error);
    const message = error instanceof Error ? error.message : String(error);
    if (code !== undefined && code in NON_RETRYABLE_SQLSTATES) {
      return new NonRetryableExportError(
        `Postgres ${target}: ${NON_RETRYABLE_SQLSTATES[code]}: ${message} (SQLSTATE ${code})`,
        { cause: error },
      );
    }
    const nodeCode = (error as { code?: unknown } | null)?.code;
    if (typeof nodeCode === 'string' && CERTIFICATE_ERROR_CODES.has(nodeCode)) {
      return new NonRetryableExportError(
        `Postgres ${target}: the server's TLS certificate does not verify (${message}); ` +
          'set has_self_signed_cert for a self-signed certificate',
        { cause: error },
      );
    }
    if (message.includes('does not support SSL')) {
      return new NonRetryableExportError(
        `Postgres ${target}: ${message}; the export connects with TLS only`,
        {
          cause: error,
        },
      );
    }
    return error instanceof Error ? error : new Error(message);
  }
}

/** One INSERT's rows, held as one array per column (bound as arrays and unnested by the server). */
class StatementBatch {
  private readonly byUuid = new Map<string, (string | number | null)[]>();
  bytes = 0;

  get size(): number {
    return this.byUuid.size;
  }

  add(row: ExportedEventRow): void {
    const values = toColumnValues(row);
    for (const value of values) if (typeof value === 'string') this.bytes += value.length;
    // ON CONFLICT refuses to touch a row twice in one statement: the last copy of a uuid wins.
    this.byUuid.delete(row.uuid);
    this.byUuid.set(row.uuid, values);
  }

  columns(): ColumnValues {
    const columns: ColumnValues = EVENT_COLUMNS.map(() => []);
    for (const values of this.byUuid.values()) {
      values.forEach((value, index) => columns[index]?.push(value));
    }
    return columns;
  }
}

function buildUpsertSql(qualifiedTable: string): string {
  const names = EVENT_COLUMNS.map(([name]) => escapeIdentifier(name));
  const arrays = EVENT_COLUMNS.map(([, , arrayType], index) => `$${index + 1}::${arrayType}[]`);
  const updates = names
    .filter((name) => name !== escapeIdentifier('uuid'))
    .map((name) => `${name} = EXCLUDED.${name}`);
  return (
    `INSERT INTO ${qualifiedTable} (${names.join(', ')}) ` +
    `SELECT * FROM unnest(${arrays.join(', ')}) ` +
    `ON CONFLICT (${escapeIdentifier('uuid')}) DO UPDATE SET ${updates.join(', ')}`
  );
}

/** The row as PostHog's Postgres export writes it, in EVENT_COLUMNS order. */
export function toColumnValues(row: ExportedEventRow): (string | number | null)[] {
  const properties = row.properties ?? {};
  const ip = properties.$ip;
  const set = row.set ?? asObject(properties.$set);
  const setOnce = row.set_once ?? asObject(properties.$set_once);
  return [
    withoutNul(row.uuid),
    withoutNul(row.event),
    jsonb(properties),
    // NOTE: PostHog selects toJSONString(toJSONString(elements_chain)): the column holds a JSON
    // string whose text is the chain, quoted once more. Kept for tables PostHog filled before.
    jsonb(JSON.stringify(row.elements_chain ?? '')),
    set === null ? null : jsonb(set),
    setOnce === null ? null : jsonb(setOnce),
    withoutNul(row.distinct_id),
    row.team_id,
    // PostHog: nullIf(JSONExtractString(properties, '$ip'), '').
    typeof ip === 'string' && ip !== '' ? withoutNul(ip) : null,
    // The legacy column is kept but no longer filled.
    '',
    row.timestamp,
  ];
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : null;
}

/**
 * Postgres text and jsonb refuse the NUL character, which events may carry: one such event would
 * fail every retry of the run, so it is dropped from the value (PostHog's CSV COPY fails instead).
 */
function jsonb(value: unknown): string {
  const text = JSON.stringify(value);
  // An escaped NUL is `\u0000` preceded by an even number of backslashes.
  return text.includes('\\u0000') ? text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1') : text;
}

function withoutNul(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}

function sqlState(error: unknown): string | undefined {
  return error instanceof DatabaseError ? error.code : undefined;
}

export const createPostgresDestination: DestinationFactory = (config, run) => {
  if (run.model !== 'events') {
    throw new NonRetryableExportError(
      `Postgres destination: the ${run.model} model is not supported, only events`,
    );
  }
  return new PostgresDestinationWriter(parsePostgresDestinationConfig(config), run);
};
