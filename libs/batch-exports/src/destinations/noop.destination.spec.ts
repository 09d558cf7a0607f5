import { Readable } from 'node:stream';
import { NonRetryableExportError } from '../batch-export.errors';
import type { DestinationFactory, ExportChunk } from '../destination.types';
import { createNoOpDestination, NoOpDestinationWriter } from './noop.destination';

const factory: DestinationFactory = createNoOpDestination;

const run = {
  runId: 'run',
  batchExportId: 'export',
  teamId: 1,
  model: 'events' as const,
  dataIntervalStart: null,
  dataIntervalEnd: new Date('2024-03-01T00:00:00Z'),
};

function chunkOf(pieces: (string | Buffer)[], records: number, cursor = 'c'): ExportChunk {
  return { body: Readable.from(pieces), records, cursor };
}

describe('NoOp destination', () => {
  it('reads, counts and drops the rows of every chunk', async () => {
    const writer = factory({}, run) as NoOpDestinationWriter;
    expect([writer.format, writer.resumable, writer.maxChunkRows]).toEqual(['JSONEachRow', true, 10_000]);

    const body = '{"uuid":"a"}\n{"uuid":"b"}\n';
    expect(await writer.write(chunkOf([body], 2, 'c1'), new AbortController().signal)).toEqual({
      bytes: Buffer.byteLength(body),
    });
    // No newline after the last row, and a blank line: both fine.
    await writer.write(chunkOf(['{"uuid":"c"}\n\n{"uuid":"d"}'], 2, 'c2'), new AbortController().signal);
    await writer.finish(new AbortController().signal);

    expect(writer.rowsWritten).toBe(4);
    expect(writer.chunks.map((chunk) => [chunk.cursor, chunk.rows])).toEqual([
      ['c1', 2],
      ['c2', 2],
    ]);
    expect(writer.finished).toBe(true);
  });

  it('reads lines and characters cut across stream pieces', async () => {
    const writer = new NoOpDestinationWriter({});
    const bytes = Buffer.from('{"uuid":"é✓-1"}\r\n{"uuid":"é✓-2"}\n');
    const pieces = Array.from(bytes, (byte) => Buffer.from([byte]));
    await writer.write(chunkOf(pieces, 2), new AbortController().signal);
    expect(writer.chunks[0]).toMatchObject({ rows: 2, bytes: bytes.length });
  });

  it('fails the chunk on a line that is not JSON, and refuses a row without a uuid', async () => {
    const writer = new NoOpDestinationWriter({});
    await expect(
      writer.write(chunkOf(['{"uuid":"a"}\n{"uuid":'], 2), new AbortController().signal),
    ).rejects.toThrow('Row 2 of the chunk is not JSON');
    await expect(writer.write(chunkOf(['{"event":"a"}\n'], 1), new AbortController().signal)).rejects.toThrow(
      NonRetryableExportError,
    );
  });

  it('takes its chunk size from config.max_chunk_rows, for tests of the runner', () => {
    expect(factory({ max_chunk_rows: 2 }, run).maxChunkRows).toBe(2);
    expect(() => factory({ max_chunk_rows: 0 }, run)).toThrow(NonRetryableExportError);
  });

  it('stops on a cancelled run', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(
      new NoOpDestinationWriter({}).write(chunkOf(['{"uuid":"a"}\n'], 1), controller.signal),
    ).rejects.toThrow('cancelled');
  });
});
