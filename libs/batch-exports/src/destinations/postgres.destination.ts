import { Client, DatabaseError, escapeIdentifier } from 'pg';
import { egressRefusalOf, EgressPolicy, parseIpAddress } from '@hogbase/egress';
import { NonRetryableExportError } from '../batch-export.errors';
import {
  type DestinationWriter,
  type ExportChunk,
  type ExportRunInfo,
  type ExportedEventRow,
  type ExportedPersonRow,
  type WriteResult,
} from '../destination.types';
import {
  DestinationConfigReader,
  EVENT_ROWS,
  JsonLinesReader,
  PERSON_ROWS,
  type RowKind,
} from './destination.util';

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

/** As `insert_into_postgres_activity` creates it (products/batch_exports/backend/temporal/destinations/postgres_batch_export.py). */
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

/** Versions BIGINT, as PostHog's export creates them. */
const PERSON_COLUMNS = [
  ['team_id', 'INTEGER', 'integer'],
  ['distinct_id', 'TEXT', 'text'],
  ['person_id', 'TEXT', 'text'],
  ['properties', 'JSONB', 'jsonb'],
  ['person_distinct_id_version', 'BIGINT', 'bigint'],
  ['person_version', 'BIGINT', 'bigint'],
  ['created_at', 'TIMESTAMP WITH TIME ZONE', 'timestamptz'],
  ['is_deleted', 'BOOLEAN', 'boolean'],
] as const;

type ColumnValue = string | number | boolean | null;
type ColumnValues = ColumnValue[][];
type Column = readonly [name: string, type: string, arrayType: string];

interface TableModel<Row extends object> {
  columns: readonly Column[];
  /** A unique index on exactly these columns. */
  key: readonly string[];
  keyIsPrimary: boolean;
  /** PostHog adds model fields over time: write only the columns an existing table has. */
  onlyExistingColumns: boolean;
  rows: RowKind<Row>;
  keyOf(row: Row): string;
  values(row: Row): ColumnValue[];
  /** Undefined: always (the last write wins). */
  replaceWhen?(present: ReadonlySet<string>): string | undefined;
}

const EVENTS_TABLE: TableModel<ExportedEventRow> = {
  columns: EVENT_COLUMNS,
  key: ['uuid'],
  keyIsPrimary: false,
  onlyExistingColumns: false,
  rows: EVENT_ROWS,
  keyOf: (row) => row.uuid,
  values: (row) => toColumnValues(row),
};

/** A row replaces the one there only when newer, so a retried or older run never brings back an older one. */
const PERSONS_TABLE: TableModel<ExportedPersonRow> = {
  columns: PERSON_COLUMNS,
  key: ['team_id', 'distinct_id'],
  keyIsPrimary: true,
  onlyExistingColumns: true,
  rows: PERSON_ROWS,
  keyOf: (row) => `${row.team_id}:${row.distinct_id}`,
  values: (row) => [
    row.team_id,
    withoutNul(row.distinct_id),
    row.person_id,
    jsonb(row.properties ?? {}),
    row.person_distinct_id_version,
    row.person_version,
    row.created_at,
    row.is_deleted ?? false,
  ],
  replaceWhen(present) {
    // NOTE: PostHog replaces when either version is greater; the mapping's version comes first
    // here, since after a merge the person's version is another person's and not comparable.
    const versions = ['person_distinct_id_version', 'person_version'].filter((name) => present.has(name));
    if (versions.length === 0) return undefined;
    const side = (table: string) =>
      `(${versions.map((name) => `coalesce(${table}.${escapeIdentifier(name)}, -1)`).join(', ')})`;
    return `${side('EXCLUDED')} > ${side('final')}`;
  },
};

const STATEMENT_MAX_ROWS = 1_000;
const STATEMENT_MAX_BYTES = 8 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 30_000;

const NON_RETRYABLE_SQLSTATES: Record<string, string> = {
  '28P01': 'the credentials were refused',
  '28000': 'the connection was not authorized',
  '3D000': 'the database does not exist',
  '3F000': 'the schema does not exist',
  '42501': 'permission denied',
  '42P01': 'the table does not exist',
  '42703': 'the table lacks a column the export writes',
  '42804': 'a column of the table has another type than the export writes',
  '42P10': 'the table has no unique index on the columns the export upserts by',
  '22001': 'a value is too long for its column',
  '23502': 'a column of the table refuses NULL',
  '53100': 'the disk is full',
};

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

/** One upsert transaction per chunk: a chunk written twice leaves one row per uuid (or distinct id). */
export class PostgresDestinationWriter<Row extends object> implements DestinationWriter {
  readonly format = 'JSONEachRow';
  readonly resumable = true;
  readonly maxChunkRows = 10_000;

  private client: Client | undefined;
  private upsert: { columns: number[]; sql: string } | undefined;
  private readonly qualifiedTable: string;

  constructor(
    private readonly config: PostgresDestinationConfig,
    private readonly run: ExportRunInfo,
    private readonly model: TableModel<Row>,
    private readonly egress: EgressPolicy = EgressPolicy.strict(),
  ) {
    this.qualifiedTable = `${escapeIdentifier(config.schema)}.${escapeIdentifier(config.tableName)}`;
  }

  async write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    const client = await this.connect();
    const reader = new JsonLinesReader(chunk.body, this.model.rows);
    let inTransaction = false;
    try {
      const upsert = await this.ensureTable(client);
      await client.query('BEGIN');
      inTransaction = true;
      let batch = new StatementBatch(this.model, upsert.columns);
      for await (const row of reader.rows()) {
        batch.add(row);
        if (batch.size >= STATEMENT_MAX_ROWS || batch.bytes >= STATEMENT_MAX_BYTES) {
          signal.throwIfAborted();
          await client.query(upsert.sql, batch.columns());
          batch = new StatementBatch(this.model, upsert.columns);
        }
      }
      signal.throwIfAborted();
      if (batch.size > 0) await client.query(upsert.sql, batch.columns());
      await client.query('COMMIT');
      inTransaction = false;
      return { bytes: reader.bytesRead };
    } catch (error) {
      chunk.body.destroy();
      if (inTransaction) {
        await client.query('ROLLBACK').catch(() => undefined);
      }
      // The connection may be dead: a next write opens a new one.
      await this.close();
      if (signal.aborted) throw signal.reason;
      throw this.toExportError(error);
    }
  }

  async finish(signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    await this.close();
    return { bytes: 0 };
  }

  async abort(): Promise<void> {
    await this.close();
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    // Resolved and checked once, then connected to that address: no second lookup to rebind.
    let address: string;
    try {
      ({ address } = await this.egress.resolve(this.config.host, this.config.port));
    } catch (error) {
      throw this.toExportError(error);
    }
    const hostIsName = parseIpAddress(this.config.host) === undefined;
    const client = new Client({
      host: address,
      port: this.config.port,
      database: this.config.database,
      user: this.config.user,
      password: this.config.password,
      // sslmode=require as PostHog; the certificate is checked against the configured name.
      ssl: {
        rejectUnauthorized: !this.config.hasSelfSignedCert,
        ...(hostIsName ? { servername: this.config.host } : {}),
      },
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: `hogbase batch export ${this.run.runId}`.slice(0, 63),
      options: '-c TimeZone=UTC',
    });
    // Unheard, a connection dropped between queries would crash the process.
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

  /** The unique index the upsert needs (PostHog's events table has none), under a lock: runs may start together. */
  private async ensureTable(client: Client): Promise<{ columns: number[]; sql: string }> {
    if (this.upsert) return this.upsert;
    const { columns, key, keyIsPrimary } = this.model;
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.qualifiedTable]);
      const existing = await client.query<{ exists: boolean }>(
        'SELECT to_regclass($1) IS NOT NULL AS exists',
        [this.qualifiedTable],
      );
      if (!existing.rows[0]?.exists) {
        const definitions = columns.map(([name, type]) => `${escapeIdentifier(name)} ${type}`);
        if (keyIsPrimary) definitions.push(`PRIMARY KEY (${key.map(escapeIdentifier).join(', ')})`);
        await client.query(`CREATE TABLE ${this.qualifiedTable} (${definitions.join(', ')})`);
      }
      const present = await this.columnsOf(client);
      const written = columns
        .map(([name], index) => ({ name, index }))
        .filter(({ name }) => !this.model.onlyExistingColumns || present.has(name));
      const missingKey = key.filter((name) => !present.has(name));
      if (this.model.onlyExistingColumns && missingKey.length > 0) {
        throw new NonRetryableExportError(
          `Postgres table ${this.qualifiedTable} lacks the column(s) ${missingKey.join(', ')} the export upserts by`,
        );
      }
      const index = await client.query<{ exists: boolean }>(
        `SELECT EXISTS (
           SELECT 1 FROM pg_index i
           WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indimmediate AND i.indisvalid
             AND i.indnatts = cardinality($2::text[]) AND i.indpred IS NULL AND i.indexprs IS NULL
             AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_attribute a
                   WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey::int2[]))
               = (SELECT array_agg(name ORDER BY name) FROM unnest($2::text[]) AS name)
         ) AS exists`,
        [this.qualifiedTable, key],
      );
      if (!index.rows[0]?.exists) await this.createKeyIndex(client);
      await client.query('COMMIT');
      this.upsert = {
        columns: written.map(({ index: position }) => position),
        sql: this.upsertSql(
          written.map(({ index: position }) => position),
          present,
        ),
      };
      return this.upsert;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  private async columnsOf(client: Client): Promise<Set<string>> {
    const { rows } = await client.query<{ name: string }>(
      `SELECT attname::text AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
      [this.qualifiedTable],
    );
    return new Set(rows.map((row) => row.name));
  }

  private upsertSql(positions: number[], present: ReadonlySet<string>): string {
    const columns = positions.map((position) => this.model.columns[position]);
    const names = columns.map(([name]) => escapeIdentifier(name));
    const arrays = columns.map(([, , arrayType], index) => `$${index + 1}::${arrayType}[]`);
    const key = this.model.key.map(escapeIdentifier);
    const updates = names.filter((name) => !key.includes(name)).map((name) => `${name} = EXCLUDED.${name}`);
    const when = this.model.replaceWhen?.(present);
    return (
      `INSERT INTO ${this.qualifiedTable} AS final (${names.join(', ')}) ` +
      `SELECT * FROM unnest(${arrays.join(', ')}) ` +
      `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${updates.join(', ')}` +
      (when ? ` WHERE ${when}` : '')
    );
  }

  private async createKeyIndex(client: Client): Promise<void> {
    const key = this.model.key;
    const statement = `CREATE UNIQUE INDEX ON ${this.qualifiedTable} (${key.map(escapeIdentifier).join(', ')})`;
    try {
      // NOTE: on a large existing table this blocks other writers while the index builds, once.
      await client.query(statement);
    } catch (error) {
      const code = sqlState(error);
      const reason =
        code === '23505'
          ? `it holds several rows with the same ${key.join(', ')}`
          : code === '42501'
            ? `user "${this.config.user}" may not create it (only the table's owner may)`
            : code === '42703'
              ? `the table has no ${key.join(', ')} column`
              : undefined;
      if (reason === undefined) throw error;
      throw new NonRetryableExportError(
        `Postgres table ${this.qualifiedTable} has no unique index on ${key.join(', ')}, which the export needs to ` +
          `write each row once, and it cannot be created: ${reason}. Create it with: ${statement}`,
        { cause: error },
      );
    }
  }

  private toExportError(error: unknown): Error {
    if (error instanceof NonRetryableExportError) return error;
    const refusal = egressRefusalOf(error);
    if (refusal) return new NonRetryableExportError(`Postgres destination: ${refusal.message}`);
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

class StatementBatch<Row extends object> {
  private readonly byKey = new Map<string, ColumnValue[]>();
  bytes = 0;

  constructor(
    private readonly model: TableModel<Row>,
    private readonly positions: readonly number[],
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  add(row: Row): void {
    const values = this.model.values(row);
    for (const value of values) if (typeof value === 'string') this.bytes += value.length;
    // ON CONFLICT refuses to touch a row twice in one statement: the last copy of a key wins.
    const key = this.model.keyOf(row);
    this.byKey.delete(key);
    this.byKey.set(key, values);
  }

  columns(): ColumnValues {
    const columns: ColumnValues = this.positions.map(() => []);
    for (const values of this.byKey.values()) {
      this.positions.forEach((position, index) => columns[index]?.push(values[position] ?? null));
    }
    return columns;
  }
}

export function toColumnValues(row: ExportedEventRow): ColumnValue[] {
  const properties = row.properties ?? {};
  const ip = properties.$ip;
  const set = row.set ?? asObject(properties.$set);
  const setOnce = row.set_once ?? asObject(properties.$set_once);
  return [
    withoutNul(row.uuid),
    withoutNul(row.event),
    jsonb(properties),
    // NOTE: quoted twice, as PostHog's toJSONString(toJSONString(elements_chain)), for tables it filled.
    jsonb(JSON.stringify(row.elements_chain ?? '')),
    set === null ? null : jsonb(set),
    setOnce === null ? null : jsonb(setOnce),
    withoutNul(row.distinct_id),
    row.team_id,
    // PostHog: nullIf(JSONExtractString(properties, '$ip'), '').
    typeof ip === 'string' && ip !== '' ? withoutNul(ip) : null,
    // site_url: kept, never filled.
    '',
    row.timestamp,
  ];
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : null;
}

/** Postgres refuses NUL, which events may carry: kept, one such event would fail every retry of the run. */
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

export function createPostgresDestination(
  config: Record<string, unknown>,
  run: ExportRunInfo,
  egress: EgressPolicy = EgressPolicy.strict(),
): DestinationWriter {
  const parsed = parsePostgresDestinationConfig(config);
  switch (run.model) {
    case 'events':
      return new PostgresDestinationWriter(parsed, run, EVENTS_TABLE, egress);
    case 'persons':
      return new PostgresDestinationWriter(parsed, run, PERSONS_TABLE, egress);
  }
}
