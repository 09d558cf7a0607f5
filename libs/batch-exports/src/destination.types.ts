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
  /** At most this many rows per chunk; undefined when the whole interval must be one chunk (a single Parquet object). */
  readonly maxChunkRows: number | undefined;
  /** Resolves once the destination has the chunk durably (or as durably as it will ever have it). */
  write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult>;
  /** After the last chunk (also after none: an empty interval): completes objects, manifests. */
  finish(signal: AbortSignal): Promise<void>;
  /** The run failed or was cancelled: drop what is incomplete (multipart uploads). Never throws. */
  abort(): Promise<void>;
}

/** Opens a writer for a run from the destination's (unsealed) config. */
export type DestinationFactory = (config: Record<string, unknown>, run: ExportRunInfo) => DestinationWriter;
