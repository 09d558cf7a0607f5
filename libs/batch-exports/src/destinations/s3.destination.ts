import { once } from 'node:events';
import { PassThrough, type Transform } from 'node:stream';
import zlib from 'node:zlib';

import {
  AbortMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createEgressAgents, egressRefusalOf, EgressPolicy } from '@hogbase/egress';

import {
  NonRetryableExportError,
  type DestinationWriter,
  type ExportChunk,
  type ExportRunInfo,
  type WriteResult,
} from '../destination.types';
import {
  S3KeyTemplateError,
  s3ManifestKey,
  s3ObjectKey,
  type S3Compression,
  type S3FileFormat,
} from './s3-key.util';

const MIB = 1024 * 1024;
/** S3's smallest multipart part. With QUEUE_SIZE parts in flight an object holds ~15 MiB at most. */
const PART_SIZE = 5 * MIB;
const QUEUE_SIZE = 2;
/**
 * Rows per JSONLines chunk: the run's progress granularity, and the most the ClickHouse side holds
 * at once. A ClickHouse server streams a chunk, but the embedded chDB hands over a query's whole
 * result (~25 MB of JSON here) before the stream starts; `npm run bench -- exports` shows peak memory.
 */
const JSONLINES_CHUNK_ROWS = 20_000;
/**
 * Parquet chunks are whole objects, so with `max_file_size_mb` a chunk's row count sets the object
 * size. Estimate: an event row (properties JSON, person properties, uuids, timestamps) is 1–2 KB
 * as JSON and compresses to a few hundred bytes in columnar Parquet; 1 KiB a row keeps objects at
 * or under the limit for typical events (a persons row is smaller still).
 */
const PARQUET_BYTES_PER_ROW_ESTIMATE = 1024;
/** How long `abort` waits for an in-flight part before giving up on a clean abort. */
const ABORT_TIMEOUT_MS = 30_000;

const JSONLINES_COMPRESSIONS = ['gzip', 'brotli', 'zstd'] as const;
/** ClickHouse's `output_format_parquet_compression_method` values PostHog also accepts. */
const PARQUET_COMPRESSIONS = ['zstd', 'snappy', 'gzip', 'lz4', 'brotli'] as const;

type JsonLinesCompression = (typeof JSONLINES_COMPRESSIONS)[number];
export type ParquetCompression = (typeof PARQUET_COMPRESSIONS)[number] | 'none';

export interface S3DestinationConfig {
  bucketName: string;
  region: string;
  prefix: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
  endpointUrl: string | null;
  useVirtualStyleAddressing: boolean;
  fileFormat: S3FileFormat;
  compression: S3Compression | null;
  maxFileSizeBytes: number | null;
  encryption: string | null;
  kmsKeyId: string | null;
}

/** The S3 writer also tells the runner how ClickHouse must compress Parquet (the writer never does). */
export interface S3DestinationWriter extends DestinationWriter {
  readonly parquetCompression: ParquetCompression | null;
  /** Settings for the runner's ClickHouse query: `output_format_parquet_compression_method` for Parquet. */
  readonly clickHouseSettings: Readonly<Record<string, string>>;
}

/**
 * Reads PostHog's S3 config (`S3InsertInputs`). A bad value is a NonRetryableExportError: trying
 * again cannot fix it.
 */
export function parseS3DestinationConfig(config: Record<string, unknown>): S3DestinationConfig {
  const bucketName = optionalString(config, 'bucket_name');
  if (bucketName === null) throw invalid('bucket_name', config.bucket_name, 'a bucket name is required');
  const fileFormat = optionalString(config, 'file_format') ?? 'JSONLines';
  if (fileFormat !== 'JSONLines' && fileFormat !== 'Parquet') {
    throw invalid('file_format', fileFormat, 'supported file formats are JSONLines and Parquet');
  }
  const compression = optionalString(config, 'compression');
  const supported: readonly string[] =
    fileFormat === 'JSONLines' ? JSONLINES_COMPRESSIONS : PARQUET_COMPRESSIONS;
  if (compression !== null && !supported.includes(compression)) {
    throw invalid('compression', compression, `supported for ${fileFormat}: ${supported.join(', ')}`);
  }
  const endpointUrl = optionalString(config, 'endpoint_url');
  if (endpointUrl !== null && !URL.canParse(endpointUrl)) {
    throw invalid('endpoint_url', endpointUrl, 'not a URL');
  }
  const accessKeyId = optionalString(config, 'aws_access_key_id');
  const secretAccessKey = optionalString(config, 'aws_secret_access_key');
  // As botocore's PartialCredentialsError: one key without the other is a mistake, never a cue to
  // look for credentials elsewhere. (Values never go into the message: they are secrets.)
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new NonRetryableExportError(
      `S3 destination: ${accessKeyId === null ? 'aws_access_key_id' : 'aws_secret_access_key'} is missing: aws_access_key_id and aws_secret_access_key go together`,
    );
  }
  return {
    bucketName,
    region: optionalString(config, 'region') ?? 'us-east-1',
    prefix: optionalString(config, 'prefix') ?? '',
    accessKeyId,
    secretAccessKey,
    endpointUrl,
    useVirtualStyleAddressing: config.use_virtual_style_addressing === true,
    fileFormat,
    compression: compression as S3Compression | null,
    maxFileSizeBytes: maxFileSizeBytes(config.max_file_size_mb),
    encryption: optionalString(config, 'encryption'),
    kmsKeyId: optionalString(config, 'kms_key_id'),
  };
}

/** `max_file_size_mb` in bytes; null, absent and 0 mean one object per interval (PostHog tests truthiness). */
function maxFileSizeBytes(value: unknown): number | null {
  if (value === null || value === undefined || value === 0 || value === '') return null;
  const megabytes = typeof value === 'string' ? Number(value) : value;
  if (typeof megabytes !== 'number' || !Number.isFinite(megabytes) || megabytes < 0) {
    throw invalid('max_file_size_mb', value, 'a positive number of megabytes');
  }
  return Math.max(1, Math.round(megabytes * MIB));
}

function optionalString(config: Record<string, unknown>, name: string): string | null {
  const value = config[name];
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') throw invalid(name, value, 'a string');
  return value;
}

function invalid(name: string, value: unknown, why: string): NonRetryableExportError {
  return new NonRetryableExportError(`S3 destination: ${name}=${JSON.stringify(value)}: ${why}`);
}

const NON_RETRYABLE_S3_ERRORS = new Set([
  'AccessDenied',
  'AllAccessDisabled',
  'NoSuchBucket',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidBucketName',
  'AuthorizationHeaderMalformed',
  'PermanentRedirect',
  'KMS.NotFoundException',
  'KMS.DisabledException',
]);
const RETRYABLE_4XX_ERRORS = new Set(['RequestTimeout', 'SlowDown', 'TooManyRequests']);

/**
 * Refused credentials, a missing bucket, a wrong region and any other 4xx but a timeout or a
 * throttle cannot get better by waiting: the run fails. 5xx and network errors are retried.
 */
export function classifyS3Error(error: unknown, action: string): Error {
  if (error instanceof NonRetryableExportError) return error;
  const refusal = egressRefusalOf(error);
  if (refusal) return new NonRetryableExportError(`S3 ${action}: ${refusal.message}`, { cause: error });
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode ?? 0;
    const permanent =
      NON_RETRYABLE_S3_ERRORS.has(error.name) ||
      (status >= 300 &&
        status < 500 &&
        status !== 408 &&
        status !== 429 &&
        !RETRYABLE_4XX_ERRORS.has(error.name));
    if (permanent) {
      return new NonRetryableExportError(`S3 ${action}: ${error.name} (HTTP ${status}): ${error.message}`, {
        cause: error,
      });
    }
  }
  return error instanceof Error ? error : new Error(String(error));
}

export interface S3DestinationOptions {
  /** Where the client may connect (EGRESS_ALLOWED_PRIVATE_NETWORKS); strict by default. */
  egress?: EgressPolicy;
  /**
   * BATCH_EXPORT_S3_SERVER_CREDENTIALS: an export without keys runs with the server's own AWS
   * identity (the SDK's default chain). False by default: such a run fails.
   */
  serverCredentials?: boolean;
}

/** What a run of an export without keys fails with when the server lends it no credentials. */
export const S3_SERVER_CREDENTIALS_REFUSED =
  'S3 destination: the export has no aws_access_key_id and aws_secret_access_key, and this server does not lend its own AWS credentials to exports (BATCH_EXPORT_S3_SERVER_CREDENTIALS is off): enter the keys of an identity that may write to the bucket, or have the operator set BATCH_EXPORT_S3_SERVER_CREDENTIALS=true';

/** A DestinationFactory once its options are bound (createBatchExportDestinations does). */
export function createS3Destination(
  config: Record<string, unknown>,
  run: ExportRunInfo,
  options: S3DestinationOptions = {},
): DestinationWriter {
  return createS3DestinationWriter(config, run, options);
}

/**
 * Opens the writer. A bad config does not throw here: the first `write` or `finish` fails with
 * the NonRetryableExportError, so the run fails whatever way the runner calls the factory.
 */
export function createS3DestinationWriter(
  config: Record<string, unknown>,
  run: ExportRunInfo,
  options: S3DestinationOptions = {},
): S3DestinationWriter {
  try {
    const parsed = parseS3DestinationConfig(config);
    // SECURITY: without keys the SDK would sign with whatever the server's default chain finds
    // (environment, shared files, instance or container role): the operator's identity, lent to
    // every member who can save an export, for any bucket it can write. Refused before a client exists.
    if (parsed.accessKeyId === null && options.serverCredentials !== true) {
      throw new NonRetryableExportError(S3_SERVER_CREDENTIALS_REFUSED);
    }
    // Fail on a bad prefix before any byte moves (PostHog: InvalidS3Key, non-retryable).
    s3ManifestKey(run, parsed.prefix);
    return new S3Writer(parsed, run, options.egress ?? EgressPolicy.strict());
  } catch (error) {
    const failure =
      error instanceof S3KeyTemplateError
        ? new NonRetryableExportError(`S3 destination: an invalid S3 key prefix: ${error.message}`, {
            cause: error,
          })
        : classifyS3Error(error, 'configuration');
    return new FailedWriter(failure, config);
  }
}

class FailedWriter implements S3DestinationWriter {
  readonly format: 'JSONEachRow' | 'Parquet';
  readonly resumable = false;
  readonly maxChunkRows = undefined;
  readonly parquetCompression = null;
  readonly clickHouseSettings = {};

  constructor(
    private readonly failure: Error,
    config: Record<string, unknown>,
  ) {
    this.format = config.file_format === 'Parquet' ? 'Parquet' : 'JSONEachRow';
  }

  write(chunk: ExportChunk): Promise<WriteResult> {
    chunk.body.destroy();
    return Promise.reject(this.failure);
  }

  finish(): Promise<WriteResult> {
    return Promise.reject(this.failure);
  }

  abort(): Promise<void> {
    return Promise.resolve();
  }
}

class S3Writer implements S3DestinationWriter {
  readonly format: 'JSONEachRow' | 'Parquet';
  /** Objects are written whole: a restarted run writes the same keys again, never a duplicate. */
  readonly resumable = false;
  readonly maxChunkRows: number | undefined;
  readonly parquetCompression: ParquetCompression | null;
  readonly clickHouseSettings: Readonly<Record<string, string>>;

  private readonly client: S3Client;
  /** Keys of the completed data objects, in order: the manifest. */
  private readonly filesUploaded: string[] = [];
  private current: ObjectUpload | null = null;
  /** Compressed bytes of the objects completed so far (for WriteResult.bytes). */
  private completedBytes = 0;
  /** The end of the last line seen is not in the last buffer: a line split across reads. */
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
    this.client = new S3Client(s3ClientConfig(config, egress));
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
      // An empty interval writes nothing, no manifest either: PostHog returns before opening any
      // upload when ClickHouse has no rows for the interval.
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
    // A chunk ends at a row's end (JSONEachRow ends every row with a newline): the next object may start here.
    if (this.partialLine !== null) {
      await this.writeLines(this.partialLine, signal);
      this.partialLine = null;
    }
    // Flushing the compressor hands this chunk's bytes to the upload and makes the count exact.
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
   * Writes whole lines, starting the next object once the current one's compressed size reaches
   * `max_file_size_mb`.
   * TRICKY: a compressor holds input back, so the bytes out lag the bytes in. The size is only
   * known exactly after a flush; until then `compressed at last flush + raw bytes since` bounds it
   * (compression never expands data by more than a few bytes). Lines go in while that bound stays
   * under the limit; when it does not, a flush gives the exact size and the gap left. The gap
   * shrinks geometrically, so an object needs a few dozen flushes at most and ends at most one
   * line (plus the compressor's trailer) past the limit.
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
      // An empty interval writes no object (as PostHog); ClickHouse still sends a schema-only file.
      chunk.body.resume();
      await once(chunk.body, 'end', { signal });
      return { bytes: 0 };
    }
    const fileNumber = this.config.maxFileSizeBytes === null ? null : this.filesUploaded.length;
    if (fileNumber === null && this.filesUploaded.length > 0) {
      throw new Error('S3 destination: Parquet without max_file_size_mb takes the interval as one chunk');
    }
    const key = s3ObjectKey(this.run, { ...this.keyOptions(), fileNumber });
    // NOTE: each chunk is a complete Parquet file, compressed by ClickHouse: uploaded as it is.
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

function s3ClientConfig(config: S3DestinationConfig, egress: EgressPolicy): S3ClientConfig {
  return {
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
  };
}

interface ObjectParams {
  Bucket: string;
  Key: string;
  ServerSideEncryption?: 'AES256';
  SSEKMSKeyId?: string;
}

/**
 * One object being uploaded from a stream: bytes → compressor → body → lib-storage Upload, which
 * sends a single PUT under 5 MiB and a multipart upload above, QUEUE_SIZE parts in flight.
 */
class ObjectUpload {
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
