import type { Readable } from 'node:stream';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import {
  ALL_DESTINATION_SECRET_KEYS,
  NonRetryableExportError,
  type DestinationFactory,
  type DestinationWriter,
  type ExportRunInfo,
} from '@hogbase/batch-exports';
import {
  exceededQueryLimit,
  queryLimitSettings,
  type ClickHouseClient,
  type ExceededQueryLimit,
  type QueryLimits,
} from '@hogbase/clickhouse';
import type { SecretBox } from '@hogbase/config';
import { compileBatchExportQuery, sharedHogQLParser } from '@hogbase/hogql';
import {
  chunkBoundsQuery,
  chunkRowsQuery,
  countQuery,
  decodeCursor,
  encodeCursor,
  ROW_FIELDS,
  S3_DEFAULT_FIELDS,
  type CustomColumns,
  type RunCursor,
  type RunSelection,
} from './run-query.util';
import type { LoadedRun, RunStore } from './run.store';
import {
  countPersonRows,
  decodePersonsCursor,
  encodePersonsCursor,
  isPersonsCursor,
  openPersonsChunk,
  type PersonsSelection,
} from './persons-query.util';

/** The whole interval in one chunk (a single Parquet object). */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

export interface RunExecutorDeps {
  store: RunStore;
  /** The management API's. */
  pool: Pool;
  clickhouse: ClickHouseClient;
  database: string;
  secrets: SecretBox;
  destinations: Readonly<Record<string, DestinationFactory>>;
  logger: Logger;
  /** BATCH_EXPORT_LAG_SECONDS. */
  lagSeconds: number;
  /** BATCH_EXPORT_QUERY_MAX_*. */
  queryLimits: QueryLimits;
}

export type RunOutcome =
  | { status: 'skipped' }
  | { status: 'Completed'; records: number; bytes: number; durationMs: number }
  | { status: 'Cancelled'; records: number }
  | { status: 'Failed'; error: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A destination's error may quote a secret (Postgres names its user), and the run's error is an API
 * answer. Values under 3 characters stay: replacing them would garble the message for nothing.
 */
function withoutSecrets(message: string, config: Record<string, unknown> | undefined): string {
  let redacted = message;
  for (const key of ALL_DESTINATION_SECRET_KEYS) {
    const value = config?.[key];
    if (typeof value === 'string' && value.length >= 3) redacted = redacted.split(value).join('***');
  }
  return redacted;
}

/** The bound and what to change, not ClickHouse's text (it quotes the generated SQL and the server's version). */
const LIMIT_MESSAGES: Record<ExceededQueryLimit, (limits: QueryLimits) => string> = {
  time: (limits) =>
    `The export's query ran longer than a batch-export query may (${limits.maxExecutionSeconds} s, BATCH_EXPORT_QUERY_MAX_EXECUTION_SECONDS): export fewer or simpler columns, or use a shorter interval.`,
  memory: () =>
    "The export's query needed more memory than a batch-export query may use (BATCH_EXPORT_QUERY_MAX_MEMORY_BYTES): export fewer or smaller columns, or use a shorter interval.",
  result: () =>
    "The export's query returned more data than a batch-export query may (BATCH_EXPORT_QUERY_MAX_RESULT_BYTES): export fewer or smaller columns, set max_file_size_mb (S3), or use a shorter interval.",
  rows: () => "The export's query read more rows than a batch-export query may: use a shorter interval.",
};

/**
 * NOTE: a query past its bounds fails the run for good: the same query over the same interval needs
 * the same memory, and a retry would hold the engine as long again, RETRY_LIMIT times.
 */
async function boundedQuery<T>(deps: RunExecutorDeps, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    const limit = exceededQueryLimit(error);
    if (limit === undefined) throw error;
    throw new NonRetryableExportError(LIMIT_MESSAGES[limit](deps.queryLimits));
  }
}

function eventNames(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}

/**
 * Saves the cursor after each chunk the destination took. Throws on a failure worth retrying (the
 * job engine retries with back-off); a NonRetryableExportError ends the run Failed.
 */
export async function executeRun(
  runId: string,
  deps: RunExecutorDeps,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { store, logger } = deps;
  const run = await store.claim(runId);
  if (!run) return { status: 'skipped' };
  const started = Date.now();
  const log = logger.child({ runId, batchExportId: run.batchExportId });
  let writer: DestinationWriter | undefined;
  let config: Record<string, unknown> | undefined;
  try {
    config = JSON.parse(deps.secrets.open(run.export.destinationConfig)) as Record<string, unknown>;
    writer = openWriter(run, config, deps);
    const source =
      run.export.model === 'persons'
        ? personsSource(run, writer, deps)
        : await eventsSource(run, config, writer, deps, signal);
    // A cursor of the other model (the export's model changed between attempts) starts over.
    const resumeFrom = writer.resumable && source.owns(run.cursor) ? (run.cursor ?? undefined) : undefined;
    let after = resumeFrom;
    let records = after ? run.recordsCompleted : 0;
    let bytes = after ? run.bytesExported : 0;
    await store.setTotal(run.id, await source.count());
    const maxRows = writer.maxChunkRows ?? UNBOUNDED;

    for (;;) {
      signal.throwIfAborted();
      const chunk = await source.next(after, maxRows);
      if (!chunk) break;
      let written: { bytes: number };
      try {
        written = await writer.write(
          { body: chunk.body, records: chunk.records, cursor: chunk.cursor },
          signal,
        );
      } finally {
        await chunk.close?.();
      }
      after = chunk.cursor;
      records += chunk.records;
      bytes += written.bytes;
      if (
        !(await store.saveProgress(run.id, {
          cursor: chunk.cursor,
          recordsCompleted: records,
          bytesExported: bytes,
        }))
      ) {
        await writer.abort();
        await store.log(run.batchExportId, run.id, 'info', `Run cancelled after ${records} records`);
        return { status: 'Cancelled', records };
      }
    }
    bytes += (await writer.finish(signal)).bytes;
    if (!(await store.stillRunning(run.id))) {
      return { status: 'Cancelled', records };
    }
    await store.finish(run.id, { status: 'Completed', bytesExported: bytes });
    const durationMs = Date.now() - started;
    await store.log(
      run.batchExportId,
      run.id,
      'info',
      `Exported ${records} records (${bytes} bytes) in ${durationMs} ms`,
    );
    log.info({ records, bytes, durationMs }, 'batch export run completed');
    return { status: 'Completed', records, bytes, durationMs };
  } catch (error) {
    await writer?.abort();
    const message = withoutSecrets(messageOf(error), config);
    if (error instanceof NonRetryableExportError) {
      await store.finish(run.id, { status: 'Failed', error: message });
      await store.log(run.batchExportId, run.id, 'error', `Run failed: ${message}`);
      log.warn({ err: error }, 'batch export run failed');
      return { status: 'Failed', error: message };
    }
    await store.finish(run.id, { status: 'FailedRetryable', error: message });
    await store.log(run.batchExportId, run.id, 'warn', `Run failed, will retry: ${message}`);
    throw error;
  }
}

interface SourceChunk {
  body: Readable;
  records: number;
  cursor: string;
  /** Frees what the chunk holds on its engine, read to the end or not. */
  close?: () => Promise<void>;
}

interface RunSource {
  count(): Promise<number>;
  next(after: string | undefined, maxRows: number): Promise<SourceChunk | undefined>;
  owns(cursor: string | null): boolean;
}

async function eventsSource(
  run: LoadedRun,
  config: Record<string, unknown>,
  writer: DestinationWriter,
  deps: RunExecutorDeps,
  signal: AbortSignal,
): Promise<RunSource> {
  const selection: RunSelection = {
    database: deps.database,
    teamId: run.export.teamId,
    start: run.dataIntervalStart,
    end: run.dataIntervalEnd,
    lateSince: run.export.createdAt,
    lagSeconds: deps.lagSeconds,
    includeEvents: eventNames(config.include_events),
    excludeEvents: eventNames(config.exclude_events),
  };
  const custom = await customColumns(run);
  const fields = run.export.destinationType === 'S3' ? S3_DEFAULT_FIELDS : ROW_FIELDS;
  return {
    count: async () => Number((await scalar<{ rows: string }>(deps, countQuery(selection))).rows),
    owns: (cursor) => cursor !== null && !isPersonsCursor(cursor),
    async next(afterText, maxRows) {
      const after: RunCursor | undefined = decodeCursor(afterText ?? null);
      const bounds = await scalar<{ rows: string; last_timestamp: string; last_uuid: string }>(
        deps,
        chunkBoundsQuery(selection, after, maxRows),
      );
      const rows = Number(bounds.rows);
      if (rows === 0) return undefined;
      const until = { timestamp: bounds.last_timestamp, uuid: bounds.last_uuid };
      const built = chunkRowsQuery(selection, { after, until }, { format: writer.format, fields, custom });
      const { stream } = await boundedQuery(deps, () =>
        deps.clickhouse.exec({
          query: built.query,
          query_params: built.params,
          clickhouse_settings: { ...queryLimitSettings(deps.queryLimits), ...writer.clickHouseSettings },
          abort_signal: signal,
        }),
      );
      return { body: stream, records: rows, cursor: encodeCursor(until) };
    },
  };
}

/** Persons live in Postgres only; the management API refuses Parquet and HogQL columns for them. */
function personsSource(run: LoadedRun, writer: DestinationWriter, deps: RunExecutorDeps): RunSource {
  if (writer.format !== 'JSONEachRow') {
    throw new NonRetryableExportError(
      `The persons model can only be exported as JSON lines, not ${writer.format}`,
    );
  }
  const selection: PersonsSelection = {
    teamId: run.export.teamId,
    start: run.dataIntervalStart,
    end: run.dataIntervalEnd,
  };
  return {
    count: () => countPersonRows(deps.pool, selection),
    owns: isPersonsCursor,
    async next(afterText, maxRows) {
      const chunk = await openPersonsChunk(
        deps.pool,
        selection,
        decodePersonsCursor(afterText ?? null),
        maxRows,
      );
      if (!chunk) return undefined;
      return {
        body: chunk.body,
        records: chunk.records,
        cursor: encodePersonsCursor(chunk.until),
        close: () => chunk.close(),
      };
    },
  };
}

function openWriter(
  run: LoadedRun,
  config: Record<string, unknown>,
  deps: RunExecutorDeps,
): DestinationWriter {
  const factory = deps.destinations[run.export.destinationType];
  if (!factory) throw new NonRetryableExportError(`No destination of type ${run.export.destinationType}`);
  const info: ExportRunInfo = {
    runId: run.id,
    batchExportId: run.batchExportId,
    teamId: run.export.teamId,
    model: run.export.model,
    dataIntervalStart: run.dataIntervalStart,
    dataIntervalEnd: run.dataIntervalEnd,
  };
  return factory(config, info);
}

async function customColumns(run: LoadedRun): Promise<CustomColumns | undefined> {
  const query = run.export.schema?.hogql_query;
  if (!query) return undefined;
  const compiled = await compileBatchExportQuery(sharedHogQLParser(), query);
  return { columns: compiled.columns, params: compiled.params.values };
}

/** Under the same limits as the rows themselves. */
async function scalar<T>(
  deps: RunExecutorDeps,
  built: { query: string; params: Record<string, unknown> },
): Promise<T> {
  return boundedQuery(deps, async () => {
    const result = await deps.clickhouse.query({
      query: built.query,
      query_params: built.params,
      format: 'JSONEachRow',
      clickhouse_settings: queryLimitSettings(deps.queryLimits),
    });
    const [row] = await result.json<T>();
    return row;
  });
}
