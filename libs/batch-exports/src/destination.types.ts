import type { Readable } from 'node:stream';

/** The contract between the batch-export runner (workers) and a destination. */

export interface ExportRunInfo {
  runId: string;
  batchExportId: string;
  teamId: number;
  /** PostHog's `table` in S3 keys. */
  model: 'events' | 'persons';
  /** `[start, end)`; `start` is null for a run of everything before `end`. */
  dataIntervalStart: Date | null;
  dataIntervalEnd: Date;
}

export interface ExportChunk {
  /** In `DestinationWriter.format`. */
  body: Readable;
  records: number;
  /** Stored once the destination has taken the chunk. */
  cursor: string;
}

export interface WriteResult {
  /** What the destination received (compressed size for S3, request bodies for HTTP). */
  bytes: number;
}

/** `write` is called once per chunk, in order, then `finish` (or `abort`). */
export interface DestinationWriter {
  readonly format: 'JSONEachRow' | 'Parquet';
  /**
   * Whether a run stopped part-way may go on after its stored cursor (a chunk sent twice is
   * harmless), or must start its interval again (S3 objects are written whole).
   */
  readonly resumable: boolean;
  readonly clickHouseSettings?: Readonly<Record<string, string>>;
  /** Undefined when the whole interval must be one chunk (a single Parquet object). */
  readonly maxChunkRows: number | undefined;
  /** Resolves once the destination holds the chunk durably. */
  write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult>;
  /** After the last chunk, or none (an empty interval). */
  finish(signal: AbortSignal): Promise<WriteResult>;
  /** Drops what is incomplete (multipart uploads). Never throws. */
  abort(): Promise<void>;
}

export type DestinationFactory = (config: Record<string, unknown>, run: ExportRunInfo) => DestinationWriter;

/** An events model row (JSONEachRow): timestamps as ISO 8601 strings in UTC, JSON properties as objects. */
export interface ExportedEventRow {
  uuid: string;
  event: string;
  timestamp: string;
  created_at: string;
  _inserted_at: string;
  distinct_id: string;
  team_id: number;
  properties: Record<string, unknown>;
  elements_chain: string;
  person_id: string;
  person_properties: Record<string, unknown>;
  set: Record<string, unknown> | null;
  set_once: Record<string, unknown> | null;
}

/** A persons model row, one per (team_id, distinct_id), read from Postgres. */
export interface ExportedPersonRow {
  team_id: number;
  distinct_id: string;
  person_id: string;
  properties: Record<string, unknown>;
  /** Bumped when the distinct id moves to another person (a merge). */
  person_distinct_id_version: number;
  person_version: number;
  created_at: string;
  /** The change that put it in its run. */
  _inserted_at: string;
  is_deleted: boolean;
}
