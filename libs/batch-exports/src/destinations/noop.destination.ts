import type {
  DestinationFactory,
  DestinationWriter,
  ExportChunk,
  ExportRunInfo,
  WriteResult,
} from '../destination.types';
import { DestinationConfigReader, EVENT_ROWS, JsonLinesReader, PERSON_ROWS } from './destination.util';

const DEFAULT_MAX_CHUNK_ROWS = 10_000;

/** Reads, counts and drops every row: what the runner's tests export to (`max_chunk_rows` forces many chunks). */
export class NoOpDestinationWriter implements DestinationWriter {
  readonly format = 'JSONEachRow';
  readonly resumable = true;
  readonly maxChunkRows: number;

  rowsWritten = 0;
  readonly chunks: { records: number; rows: number; bytes: number; cursor: string }[] = [];
  finished = false;
  aborted = false;

  constructor(
    config: Record<string, unknown>,
    private readonly model: ExportRunInfo['model'] = 'events',
  ) {
    this.maxChunkRows = new DestinationConfigReader('NoOp', config).positiveInteger(
      'max_chunk_rows',
      DEFAULT_MAX_CHUNK_ROWS,
    );
  }

  async write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    const reader =
      this.model === 'persons'
        ? new JsonLinesReader(chunk.body, PERSON_ROWS)
        : new JsonLinesReader(chunk.body, EVENT_ROWS);
    for await (const _row of reader.rows()) {
      signal.throwIfAborted();
    }
    this.rowsWritten += reader.rowsRead;
    this.chunks.push({
      records: chunk.records,
      rows: reader.rowsRead,
      bytes: reader.bytesRead,
      cursor: chunk.cursor,
    });
    return { bytes: reader.bytesRead };
  }

  finish(signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    this.finished = true;
    return Promise.resolve({ bytes: 0 });
  }

  abort(): Promise<void> {
    this.aborted = true;
    return Promise.resolve();
  }
}

export const createNoOpDestination: DestinationFactory = (config, run) =>
  new NoOpDestinationWriter(config, run.model);
