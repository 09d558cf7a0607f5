import type { Readable } from 'node:stream';

/**
 * The contract between the batch-export runner (workers) and a destination.
 *
 * The runner reads one run's rows from ClickHouse in chunks, in the order of the run's cursor,
 * each event once (deduplicated by uuid), and hands the chunks to the destination one after the
 * other. A chunk's `body` streams straight out of ClickHouse in the destination's format: nothing
 * holds a whole chunk, let alone a whole interval, in memory.
 */

/** What a destination knows of the run it writes. */
export interface ExportRunInfo {
  runId: string;
  batchExportId: string;
  teamId: number;
  /** PostHog's `table` in S3 keys: the model exported. */
  model: 'events' | 'persons';
  /** `[start, end)`; `start` is null for a run of everything before `end`. */
  dataIntervalStart: Date | null;
  dataIntervalEnd: Date;
}

export interface ExportChunk {
  /** The rows, in the format the destination asked for (`DestinationWriter.format`). */
  body: Readable;
  /** How many rows `body` holds (the runner counted them in ClickHouse). */
  records: number;
  /** The run's position after this chunk: stored once the destination has taken the chunk. */
  cursor: string;
}

export interface WriteResult {
  /** Bytes the destination received for the chunk (compressed size for S3, request bodies for HTTP). */
  bytes: number;
}

/** One run's writer. `write` is called once per chunk, in order, then `finish` (or `abort`). */
export interface DestinationWriter {
  /** The ClickHouse output format of the chunks. */
  readonly format: 'JSONEachRow' | 'Parquet';
  /**
   * True when a run that stopped part-way (a killed worker) may go on after its stored cursor:
   * what the destination took is durable and a chunk sent twice is harmless (Postgres upserts,
   * HTTP receivers deduplicate by uuid). False when the run must start its interval again
   * (S3 objects are written whole and replaced).
   */
  readonly resumable: boolean;
  /** ClickHouse settings of the chunk queries (Parquet compression, say). */
  readonly clickHouseSettings?: Readonly<Record<string, string>>;
  /** At most this many rows per chunk; undefined when the whole interval must be one chunk (a single Parquet object). */
  readonly maxChunkRows: number | undefined;
  /** Resolves once the destination has the chunk durably (or as durably as it will ever have it). */
  write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult>;
  /**
   * After the last chunk (also after none: an empty interval): completes objects, manifests.
   * Its bytes are what completing added (a compressor's trailer).
   */
  finish(signal: AbortSignal): Promise<WriteResult>;
  /** The run failed or was cancelled: drop what is incomplete (multipart uploads). Never throws. */
  abort(): Promise<void>;
}

/** Opens a writer for a run from the destination's (unsealed) config. */
export type DestinationFactory = (config: Record<string, unknown>, run: ExportRunInfo) => DestinationWriter;

/**
 * A failure that trying again cannot fix (refused credentials, a missing bucket, a 4xx other than
 * 429): the run ends `Failed` instead of `FailedRetryable`. Any other error is retried with back-off.
 */
export class NonRetryableExportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableExportError';
  }
}

/**
 * The rows the runner gives the Postgres and HTTP destinations (JSONEachRow, one object per line):
 * the events model's fields, timestamps as ISO 8601 strings in UTC, JSON properties as objects.
 */
export interface ExportedEventRow {
  uuid: string;
  event: string;
  timestamp: string;
  created_at: string;
  /** When ClickHouse stored the row (PostHog's `_inserted_at`). */
  _inserted_at: string;
  distinct_id: string;
  team_id: number;
  properties: Record<string, unknown>;
  elements_chain: string;
  person_id: string;
  person_properties: Record<string, unknown>;
  /** `properties.$set` / `properties.$set_once`, or null. */
  set: Record<string, unknown> | null;
  set_once: Record<string, unknown> | null;
}

/**
 * The rows of the persons model (read from Postgres, JSONEachRow): PostHog's persons fields, one
 * row per (team_id, distinct_id), timestamps as ISO 8601 strings in UTC.
 */
export interface ExportedPersonRow {
  team_id: number;
  distinct_id: string;
  /** The person's UUID. */
  person_id: string;
  properties: Record<string, unknown>;
  /** Bumped when the distinct id moves to another person (a merge). */
  person_distinct_id_version: number;
  /** Bumped on every change of the person. */
  person_version: number;
  created_at: string;
  /** When the row last changed (the change that put it in its run). */
  _inserted_at: string;
  is_deleted: boolean;
}
