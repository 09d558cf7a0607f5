import { once } from 'node:events';

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EgressPolicy } from '@hogbase/egress';

import type { DestinationWriter, ExportChunk, ExportRunInfo, WriteResult } from '../destination.types';
import { createS3Client, ObjectUpload, type ObjectParams } from './s3.client';
import type { JsonLinesCompression, ParquetCompression, S3DestinationConfig } from './s3-destination.config';
import { classifyS3Error } from './s3.errors';
import { s3ManifestKey, s3ObjectKey, type S3Compression, type S3FileFormat } from './s3-key.util';

/** The run's progress granularity, and the most chDB holds at once (it hands over a whole result). */
const JSONLINES_CHUNK_ROWS = 20_000;
/** A Parquet chunk is a whole object: its row count sets the size; typical rows compress well under this. */
const PARQUET_BYTES_PER_ROW_ESTIMATE = 1024;

/** ClickHouse compresses Parquet, never the writer. */
export interface S3DestinationWriter extends DestinationWriter {
  readonly parquetCompression: ParquetCompression | null;
  readonly clickHouseSettings: Readonly<Record<string, string>>;
}

/** A new object each time `max_file_size_mb` is reached, then a manifest. */
export class S3Writer implements S3DestinationWriter {
  readonly format: 'JSONEachRow' | 'Parquet';
  /** A restarted run writes the same keys again, never a duplicate. */
  readonly resumable = false;
  readonly maxChunkRows: number | undefined;
  readonly parquetCompression: ParquetCompression | null;
  readonly clickHouseSettings: Readonly<Record<string, string>>;

  private readonly client: S3Client;
  private readonly filesUploaded: string[] = [];
  private current: ObjectUpload | null = null;
  private completedBytes = 0;
  private partialLine: Buffer | null = null;
  private closed = false;

  constructor(
    private readonly config: S3DestinationConfig,
    private readonly run: ExportRunInfo,
    egress: EgressPolicy,
  ) {
    this.format = config.fileFormat === 'Parquet' ? 'Parquet' : 'JSONEachRow';
    if (config.fileFormat === 'Parquet') {
      this.parquetCompression = config.compression ?? 'none';
      this.clickHouseSettings = { output_format_parquet_compression_method: this.parquetCompression };
      this.maxChunkRows =
        config.maxFileSizeBytes === null
          ? undefined
          : Math.max(1, Math.floor(config.maxFileSizeBytes / PARQUET_BYTES_PER_ROW_ESTIMATE));
    } else {
      this.parquetCompression = null;
      this.clickHouseSettings = {};
      this.maxChunkRows = JSONLINES_CHUNK_ROWS;
    }
    this.client = createS3Client(config, egress);
  }

  async write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    try {
      if (this.closed) throw new Error('S3 destination: write after finish or abort');
      return this.config.fileFormat === 'Parquet'
        ? await this.writeParquet(chunk, signal)
        : await this.writeJsonLines(chunk, signal);
    } catch (error) {
      chunk.body.destroy();
      throw classifyS3Error(error, 'upload');
    }
  }

  async finish(signal: AbortSignal): Promise<WriteResult> {
    const before = this.compressedBytesSoFar();
    try {
      signal.throwIfAborted();
      if (this.partialLine !== null) {
        await this.writeLines(this.partialLine, signal);
        this.partialLine = null;
      }
      await this.completeCurrent(signal);
      const bytes = this.compressedBytesSoFar() - before;
      // An empty interval writes no manifest either, as PostHog.
      if (this.config.maxFileSizeBytes !== null && this.filesUploaded.length > 0) {
        await this.client.send(
          new PutObjectCommand({
            ...this.objectParams(s3ManifestKey(this.run, this.config.prefix)),
            Body: JSON.stringify({ files: this.filesUploaded }),
            ContentType: 'application/json',
          }),
          { abortSignal: signal },
        );
      }
      this.closed = true;
      this.client.destroy();
      return { bytes };
    } catch (error) {
      throw classifyS3Error(error, 'completing the upload');
    }
  }

  async abort(): Promise<void> {
    this.closed = true;
    const current = this.current;
    this.current = null;
    try {
      if (current !== null) await current.abort();
    } finally {
      this.client.destroy();
    }
  }

  private async writeJsonLines(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    const before = this.compressedBytesSoFar();
    for await (const read of chunk.body as AsyncIterable<Buffer | string>) {
      signal.throwIfAborted();
      const data = typeof read === 'string' ? Buffer.from(read) : read;
      if (this.config.maxFileSizeBytes === null) {
        await (await this.openCurrent()).write(data, signal);
      } else {
        await this.takeLines(data, signal);
      }
    }
    if (this.partialLine !== null) {
      await this.writeLines(this.partialLine, signal);
      this.partialLine = null;
    }
    if (this.current !== null) await this.current.flush(signal);
    return { bytes: this.compressedBytesSoFar() - before };
  }

  /** Keeps rows whole across reads, so a rotation only ever happens between two rows. */
  private async takeLines(data: Buffer, signal: AbortSignal): Promise<void> {
    const lastNewline = data.lastIndexOf(0x0a);
    if (lastNewline === -1) {
      this.partialLine = this.partialLine === null ? data : Buffer.concat([this.partialLine, data]);
      return;
    }
    const head = data.subarray(0, lastNewline + 1);
    const lines = this.partialLine === null ? head : Buffer.concat([this.partialLine, head]);
    this.partialLine = lastNewline + 1 < data.length ? data.subarray(lastNewline + 1) : null;
    await this.writeLines(lines, signal);
  }

  /**
   * A compressor holds input back: `compressed at last flush + raw bytes since` bounds the size.
   * Lines go in while the bound is under the limit, then a flush shows the gap left: an object ends
   * at most one line (plus the trailer) past the limit.
   */
  private async writeLines(lines: Buffer, signal: AbortSignal): Promise<void> {
    const limit = this.config.maxFileSizeBytes ?? Number.POSITIVE_INFINITY;
    let offset = 0;
    while (offset < lines.length) {
      const current = await this.openCurrent();
      let gap = limit - current.sizeUpperBound;
      if (gap <= 0) {
        await current.flush(signal);
        if (current.compressedBytes >= limit) {
          await this.completeCurrent(signal);
          continue;
        }
        gap = limit - current.compressedBytes;
      }
      let end = lines.length;
      if (lines.length - offset > gap) {
        const newline = lines.indexOf(0x0a, offset + gap - 1);
        end = newline === -1 ? lines.length : newline + 1;
      }
      await current.write(lines.subarray(offset, end), signal);
      offset = end;
    }
  }

  private async writeParquet(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    if (chunk.records === 0) {
      // No object for an empty interval, as PostHog; ClickHouse still sends a schema-only file.
      chunk.body.resume();
      await once(chunk.body, 'end', { signal });
      return { bytes: 0 };
    }
    const fileNumber = this.config.maxFileSizeBytes === null ? null : this.filesUploaded.length;
    if (fileNumber === null && this.filesUploaded.length > 0) {
      throw new Error('S3 destination: Parquet without max_file_size_mb takes the interval as one chunk');
    }
    const key = s3ObjectKey(this.run, { ...this.keyOptions(), fileNumber });
    const upload = new ObjectUpload(this.client, this.objectParams(key), null);
    this.current = upload;
    chunk.body.once('error', (error) => upload.input.destroy(error));
    chunk.body.pipe(upload.input);
    await upload.stored(signal);
    this.current = null;
    this.filesUploaded.push(key);
    return { bytes: upload.compressedBytes };
  }

  private async openCurrent(): Promise<ObjectUpload> {
    if (this.current !== null) return this.current;
    const fileNumber = this.config.maxFileSizeBytes === null ? null : this.filesUploaded.length;
    const key = s3ObjectKey(this.run, { ...this.keyOptions(), fileNumber });
    this.current = new ObjectUpload(
      this.client,
      this.objectParams(key),
      this.config.compression as JsonLinesCompression | null,
    );
    return Promise.resolve(this.current);
  }

  private async completeCurrent(signal: AbortSignal): Promise<void> {
    const current = this.current;
    if (current === null) return;
    await current.complete(signal);
    this.current = null;
    this.completedBytes += current.compressedBytes;
    this.filesUploaded.push(current.key);
  }

  private compressedBytesSoFar(): number {
    return this.completedBytes + (this.current?.compressedBytes ?? 0);
  }

  private keyOptions(): { prefix: string; fileFormat: S3FileFormat; compression: S3Compression | null } {
    return {
      prefix: this.config.prefix,
      fileFormat: this.config.fileFormat,
      compression: this.config.compression,
    };
  }

  private objectParams(key: string): ObjectParams {
    return {
      Bucket: this.config.bucketName,
      Key: key,
      ...(this.config.encryption === null
        ? {}
        : { ServerSideEncryption: this.config.encryption as 'AES256' }),
      ...(this.config.kmsKeyId === null ? {} : { SSEKMSKeyId: this.config.kmsKeyId }),
    };
  }
}
