import { once } from 'node:events';
import { PassThrough, type Transform } from 'node:stream';
import zlib from 'node:zlib';

import { AbortMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createEgressAgents, type EgressPolicy } from '@hogbase/egress';

import type { JsonLinesCompression, S3DestinationConfig } from './s3-destination.config';
import { classifyS3Error } from './s3.errors';

const MIB = 1024 * 1024;
/** S3's smallest multipart part. With QUEUE_SIZE parts in flight an object holds ~15 MiB at most. */
const PART_SIZE = 5 * MIB;
const QUEUE_SIZE = 2;
/** How long `abort` waits for an in-flight part before giving up on a clean abort. */
const ABORT_TIMEOUT_MS = 30_000;

/** A client for the export's bucket, every connection of it checked against `egress`. */
export function createS3Client(config: S3DestinationConfig, egress: EgressPolicy): S3Client {
  return new S3Client({
    region: config.region,
    // Every connection (endpoint_url, or the bucket's host on AWS) checked against the egress
    // policy; the agents go with the client's handler when it is destroyed.
    requestHandler: createEgressAgents(egress, { keepAlive: true, maxSockets: 50 }),
    ...(config.endpointUrl === null
      ? {}
      : {
          endpoint: config.endpointUrl,
          // Most S3-compatible servers (MinIO, S3Mock, Ceph…) serve buckets as a path, not a host name.
          forcePathStyle: !config.useVirtualStyleAddressing,
          // The SDK's default CRC32 checksums on every request are refused by some S3-compatible
          // servers; send them only where S3 requires them.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
    // Keys given: these and nothing else sign (a static identity: no provider of the default chain
    // runs). No keys: the SDK's default chain, as boto3 does for PostHog, reached only when the
    // operator lends the server's identity (createS3DestinationWriter checks).
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

/**
 * One object being uploaded from a stream: bytes → compressor → body → lib-storage Upload, which
 * sends a single PUT under 5 MiB and a multipart upload above, QUEUE_SIZE parts in flight.
 */
export class ObjectUpload {
  /** Where the object's uncompressed bytes go in. */
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
    // An upload that fails stops reading its body: fail the writes waiting on it instead of hanging.
    this.done.catch((error: unknown) => {
      this.failure ??= classifyS3Error(error, `uploading ${params.Key}`);
      this.input.destroy(this.failure);
    });
  }

  /** Compressed bytes produced so far: passed downstream plus still buffered in the compressor. */
  get compressedBytes(): number {
    return this.emittedBytes + this.input.readableLength;
  }

  /** At least the size the object would have if the compressor were flushed now. */
  get sizeUpperBound(): number {
    return this.compressedBytes + this.rawSinceFlush;
  }

  async write(data: Buffer, signal: AbortSignal): Promise<void> {
    this.throwIfFailed();
    this.rawSinceFlush += data.length;
    // `once` rejects on the stream's 'error' (a failed upload destroys it) and on the signal.
    if (!this.input.write(data)) await once(this.input, 'drain', { signal });
  }

  /** Pushes what the compressor holds to the upload (a sync flush: the stream stays one stream). */
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

  /** Ends the bytes (JSONLines) and waits for the object to be stored. */
  async complete(signal: AbortSignal): Promise<void> {
    this.throwIfFailed();
    this.input.end();
    await this.stored(signal);
  }

  /** Waits for the object to be stored, once its input has ended (a piped Parquet chunk ends it). */
  async stored(signal: AbortSignal): Promise<void> {
    await settled((resolve, reject) => void this.done.then(resolve, reject), null, signal);
    this.completed = true;
  }

  /**
   * Drops the object. Ending the body with an error makes lib-storage abort its multipart upload
   * once the part in flight settles; if it could not (or took too long), the upload is aborted here.
   */
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
      // Already aborted by lib-storage (NoSuchUpload), or S3 is unreachable: abort never throws.
    }
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }
}

/**
 * A promise that also rejects on `stream`'s 'error' and on `signal`, and removes its listeners
 * once settled (racing a long-lived promise per write would pile up reactions).
 */
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
