import { once } from 'node:events';
import { PassThrough, type Transform } from 'node:stream';
import zlib from 'node:zlib';

import { AbortMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createEgressAgents, type EgressPolicy } from '@hogbase/egress';

import type { JsonLinesCompression, S3DestinationConfig } from './s3-destination.config';
import { classifyS3Error } from './s3.errors';

const MIB = 1024 * 1024;
/** S3's smallest part: with QUEUE_SIZE in flight, memory per object stays small. */
const PART_SIZE = 5 * MIB;
const QUEUE_SIZE = 2;
const ABORT_TIMEOUT_MS = 30_000;

/** Every connection (endpoint_url, or the bucket's host on AWS) checked against `egress`. */
export function createS3Client(config: S3DestinationConfig, egress: EgressPolicy): S3Client {
  return new S3Client({
    region: config.region,
    requestHandler: createEgressAgents(egress, { keepAlive: true, maxSockets: 50 }),
    ...(config.endpointUrl === null
      ? {}
      : {
          endpoint: config.endpointUrl,
          // Most S3-compatible servers serve buckets as a path, and some refuse the SDK's default checksums.
          forcePathStyle: !config.useVirtualStyleAddressing,
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
    // SECURITY: no keys means the SDK's default chain (the server's identity), which
    // createS3DestinationWriter allows only when the operator lends it.
    ...(config.accessKeyId !== null && config.secretAccessKey !== null
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
      : {}),
  });
}

export interface ObjectParams {
  Bucket: string;
  Key: string;
  ServerSideEncryption?: 'AES256';
  SSEKMSKeyId?: string;
}

export class ObjectUpload {
  readonly input: Transform;
  readonly key: string;
  private readonly bucket: string;
  private readonly upload: Upload;
  private readonly done: Promise<unknown>;
  private readonly compression: JsonLinesCompression | null;
  private failure: Error | null = null;
  private emittedBytes = 0;
  private rawSinceFlush = 0;
  private completed = false;

  constructor(
    private readonly client: S3Client,
    params: ObjectParams,
    compression: JsonLinesCompression | null,
  ) {
    this.key = params.Key;
    this.bucket = params.Bucket;
    this.compression = compression;
    this.input = createCompressor(compression);
    const body = new PassThrough();
    this.input.on('data', (data: Buffer) => {
      this.emittedBytes += data.length;
    });
    this.input.pipe(body);
    this.input.on('error', (error) => body.destroy(error));
    this.upload = new Upload({
      client,
      params: { ...params, Body: body },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    this.done = this.upload.done();
    // A failed upload stops reading its body: fail the writes waiting on it instead of hanging.
    this.done.catch((error: unknown) => {
      this.failure ??= classifyS3Error(error, `uploading ${params.Key}`);
      this.input.destroy(this.failure);
    });
  }

  get compressedBytes(): number {
    return this.emittedBytes + this.input.readableLength;
  }

  get sizeUpperBound(): number {
    return this.compressedBytes + this.rawSinceFlush;
  }

  async write(data: Buffer, signal: AbortSignal): Promise<void> {
    this.throwIfFailed();
    this.rawSinceFlush += data.length;
    if (!this.input.write(data)) await once(this.input, 'drain', { signal });
  }

  async flush(signal: AbortSignal): Promise<void> {
    this.throwIfFailed();
    const compression = this.compression;
    if (compression !== null) {
      const input = this.input as Transform & zlib.Zlib;
      await settled((resolve) => input.flush(flushKind(compression), () => resolve()), this.input, signal);
      this.throwIfFailed();
    }
    this.rawSinceFlush = 0;
  }

  async complete(signal: AbortSignal): Promise<void> {
    this.throwIfFailed();
    this.input.end();
    await this.stored(signal);
  }

  /** Once its input has ended. */
  async stored(signal: AbortSignal): Promise<void> {
    await settled((resolve, reject) => void this.done.then(resolve, reject), null, signal);
    this.completed = true;
  }

  /** lib-storage aborts its multipart upload once the part in flight settles; else it is aborted here. */
  async abort(): Promise<void> {
    if (this.completed) return;
    this.input.destroy(new Error('S3 destination: the export was aborted'));
    await Promise.race([this.done.catch(() => undefined), delay(ABORT_TIMEOUT_MS)]);
    const uploadId = this.upload.uploadId;
    if (uploadId === undefined) return;
    try {
      await this.client.send(
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: uploadId }),
      );
    } catch {
      // Already aborted, or S3 is unreachable: abort never throws.
    }
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }
}

/** Also rejects on `stream`'s 'error' and `signal`, and removes its listeners once settled. */
function settled(
  start: (resolve: () => void, reject: (error: unknown) => void) => void,
  stream: Transform | null,
  signal: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal.throwIfAborted();
    const cleanup = (): void => {
      stream?.off('error', onError);
      signal.removeEventListener('abort', onAbort);
    };
    const onError = (error: unknown): void => {
      cleanup();
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    const onAbort = (): void => onError(signal.reason);
    stream?.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    start(() => {
      cleanup();
      resolve();
    }, onError);
  });
}

function createCompressor(compression: JsonLinesCompression | null): Transform {
  switch (compression) {
    case null:
      return new PassThrough();
    case 'gzip':
      return zlib.createGzip();
    case 'brotli':
      return zlib.createBrotliCompress();
    case 'zstd':
      return zlib.createZstdCompress();
  }
}

/** The flush that keeps one valid stream (Z_FULL_FLUSH would also reset gzip's dictionary). */
function flushKind(compression: JsonLinesCompression): number {
  switch (compression) {
    case 'gzip':
      return zlib.constants.Z_SYNC_FLUSH;
    case 'brotli':
      return zlib.constants.BROTLI_OPERATION_FLUSH;
    case 'zstd':
      return zlib.constants.ZSTD_e_flush;
  }
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}
