import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';

import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressPolicy } from '@hogbase/egress';
import { createTestS3Client, testS3Endpoint } from '@hogbase/test-support';

import { createBatchExportDestinations } from '../destination-registry.util';
import { NonRetryableExportError } from '../batch-export.errors';
import type { ExportChunk, ExportRunInfo } from '../destination.types';
import {
  createS3Destination as createStrictS3Destination,
  S3_SERVER_CREDENTIALS_REFUSED,
} from './s3.destination';

/** S3Mock listens on loopback, which these tests allow (as an admin may for a MinIO of theirs). */
const LOOPBACK_ALLOWED = new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] });
const createS3Destination = (config: Record<string, unknown>, runInfo: ExportRunInfo) =>
  createStrictS3Destination(config, runInfo, { egress: LOOPBACK_ALLOWED });
const REFUSED = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';

const MIB = 1024 * 1024;
const INTERVAL = '2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00';

const run: ExportRunInfo = {
  runId: 'run-1',
  batchExportId: 'export-1',
  teamId: 1,
  model: 'events',
  dataIntervalStart: new Date('2023-07-19T23:00:00Z'),
  dataIntervalEnd: new Date('2023-07-20T00:00:00Z'),
};

/** JSONEachRow lines; `payloadBytes` of random hex keeps the compression ratio near real events' (~2x). */
function eventLines(count: number, first = 0, payloadBytes = 200): string[] {
  return Array.from(
    { length: count },
    (_, index) =>
      `${JSON.stringify({
        uuid: `00000000-0000-0000-0000-${String(first + index).padStart(12, '0')}`,
        event: '$pageview',
        properties: { payload: randomBytes(payloadBytes / 2).toString('hex') },
      })}\n`,
  );
}

/** A chunk whose body arrives in pieces that cut lines anywhere, as an HTTP response does. */
function chunkOf(lines: string[], pieceBytes = 7_919): ExportChunk {
  const bytes = Buffer.from(lines.join(''));
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += pieceBytes) {
    pieces.push(bytes.subarray(offset, offset + pieceBytes));
  }
  return { body: Readable.from(pieces), records: lines.length, cursor: `cursor-${lines.length}` };
}

describe('the S3 destination', () => {
  let s3: S3Client;
  let bucket: string;
  const signal = new AbortController().signal;

  const config = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    bucket_name: bucket,
    region: 'us-east-1',
    prefix: 'posthog/{table}/{year}/{month}/{day}',
    aws_access_key_id: 'hogbase-test',
    aws_secret_access_key: 'hogbase-test',
    endpoint_url: testS3Endpoint(),
    ...extra,
  });

  beforeAll(() => {
    s3 = createTestS3Client();
  });

  afterAll(() => {
    s3.destroy();
  });

  beforeEach(async () => {
    bucket = `hogbase-test-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  afterEach(async () => {
    await emptyAndDeleteBucket(s3, bucket);
  });

  async function keys(): Promise<string[]> {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
  }

  async function read(key: string): Promise<Buffer> {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Buffer.from(await object.Body!.transformToByteArray());
  }

  async function openUploads(): Promise<number> {
    const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    return listed.Uploads?.length ?? 0;
  }

  it('streams a gzip JSONLines interval of three chunks into one object, line for line', async () => {
    const chunks = [eventLines(500, 0), eventLines(1, 500), eventLines(700, 501)];
    const writer = createS3Destination(config({ compression: 'gzip' }), run);
    let reportedBytes = 0;
    for (const lines of chunks) reportedBytes += (await writer.write(chunkOf(lines), signal)).bytes;
    reportedBytes += (await writer.finish(signal)).bytes;

    const key = `posthog/events/2023/07/20/${INTERVAL}.jsonl.gz`;
    expect(await keys()).toEqual([key]);
    const stored = await read(key);
    expect(zlib.gunzipSync(stored).toString().split('\n')).toEqual([
      ...chunks.flat().map((line) => line.trimEnd()),
      '',
    ]);
    // Chunk sizes are counted after each chunk's flush, the gzip trailer at finish: every byte stored.
    expect(reportedBytes).toBe(stored.length);
    expect(await openUploads()).toBe(0);
  });

  it.each([
    ['brotli', 'br', (bytes: Buffer) => zlib.brotliDecompressSync(bytes)],
    ['zstd', 'zst', (bytes: Buffer) => zlib.zstdDecompressSync(bytes)],
  ])('writes %s-compressed JSONLines', async (compression, extension, decompress) => {
    const chunks = [eventLines(300, 0), eventLines(300, 300)];
    const writer = createS3Destination(config({ compression, prefix: '' }), run);
    for (const lines of chunks) await writer.write(chunkOf(lines), signal);
    await writer.finish(signal);

    const key = `${INTERVAL}.jsonl.${extension}`;
    expect(await keys()).toEqual([key]);
    expect(decompress(await read(key)).toString()).toBe(chunks.flat().join(''));
  });

  it('splits at line boundaries once an object reaches max_file_size_mb and lists exactly those objects in a manifest', async () => {
    const lines = eventLines(6_000, 0, 1_000); // ~6.2 MB of rows, ~3.4 MB gzipped
    const longestLine = Math.max(...lines.map((line) => line.length));
    const writer = createS3Destination(
      config({ compression: 'gzip', max_file_size_mb: 1, prefix: 'split' }),
      run,
    );
    for (let first = 0; first < lines.length; first += 1_500) {
      await writer.write(chunkOf(lines.slice(first, first + 1_500)), signal);
    }
    await writer.finish(signal);

    const manifestKey = `split/${INTERVAL}_manifest.json`;
    const manifest = JSON.parse((await read(manifestKey)).toString()) as { files: string[] };
    expect(manifest.files.length).toBeGreaterThanOrEqual(3);
    expect(manifest.files).toEqual(manifest.files.map((_, index) => `split/${INTERVAL}-${index}.jsonl.gz`));
    expect(await keys()).toEqual([...manifest.files, manifestKey].sort());

    const decoded: string[] = [];
    for (const key of manifest.files) {
      const stored = await read(key);
      expect(stored.length).toBeLessThanOrEqual(MIB + longestLine + 64);
      const text = zlib.gunzipSync(stored).toString();
      expect(text.endsWith('\n')).toBe(true); // every object holds whole rows
      decoded.push(text);
    }
    // All but the last object are full: rotation waits until the limit is reached.
    for (const key of manifest.files.slice(0, -1)) {
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      expect(head.ContentLength).toBeGreaterThanOrEqual(MIB);
    }
    expect(decoded.join('')).toBe(lines.join(''));
  });

  it('uploads Parquet chunks as they are: one object per chunk with max_file_size_mb, named with the compression', async () => {
    const parquetFiles = [opaqueParquet(1_000), opaqueParquet(2_000)];
    const writer = createS3Destination(
      config({ file_format: 'Parquet', compression: 'zstd', max_file_size_mb: 1, prefix: 'pq' }),
      run,
    );
    expect(writer.maxChunkRows).toBe(1024);
    for (const file of parquetFiles) {
      const result = await writer.write({ body: Readable.from([file]), records: 10, cursor: 'c' }, signal);
      expect(result.bytes).toBe(file.length);
    }
    await writer.finish(signal);

    const files = [`pq/${INTERVAL}-0.parquet.zst`, `pq/${INTERVAL}-1.parquet.zst`];
    expect(await keys()).toEqual([...files, `pq/${INTERVAL}_manifest.json`].sort());
    expect(await read(files[0])).toEqual(parquetFiles[0]);
    expect(await read(files[1])).toEqual(parquetFiles[1]);
    expect(JSON.parse((await read(`pq/${INTERVAL}_manifest.json`)).toString())).toEqual({ files });
  });

  it('writes a Parquet interval without max_file_size_mb as one object', async () => {
    const file = opaqueParquet(5_000);
    const writer = createS3Destination(config({ file_format: 'Parquet', prefix: '' }), run);
    expect(writer.maxChunkRows).toBeUndefined();
    await writer.write({ body: Readable.from([file]), records: 3, cursor: 'c' }, signal);
    await writer.finish(signal);
    expect(await keys()).toEqual([`${INTERVAL}.parquet`]);
    expect(await read(`${INTERVAL}.parquet`)).toEqual(file);
  });

  it('writes nothing for an empty interval, not even a manifest (as PostHog)', async () => {
    const writer = createS3Destination(config({ max_file_size_mb: 1 }), run);
    await writer.write({ body: Readable.from([]), records: 0, cursor: 'c' }, signal);
    await writer.finish(signal);
    expect(await keys()).toEqual([]);
  });

  it('fails with a non-retryable error when the bucket does not exist', async () => {
    const small = createS3Destination(config({ bucket_name: `${bucket}-missing` }), run);
    await small.write(chunkOf(eventLines(10)), signal);
    await expect(small.finish(signal)).rejects.toThrow(NonRetryableExportError);
    await small.abort();

    // Past one part the upload starts during the write, and the write itself fails.
    const large = createS3Destination(config({ bucket_name: `${bucket}-missing` }), run);
    const writing = (async () => {
      await large.write(chunkOf(eventLines(7_000, 0, 1_000)), signal);
      await large.finish(signal);
    })();
    await expect(writing).rejects.toThrow(/NoSuchBucket/);
    await expect(writing).rejects.toThrow(NonRetryableExportError);
    await large.abort();
  });

  it('refuses an endpoint on loopback by default, before any request, without retry', async () => {
    let requests = 0;
    const internal = createServer((_request, response) => {
      requests += 1;
      response.writeHead(403).end('<Error><Message>internal service page</Message></Error>');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    const port = (internal.address() as AddressInfo).port;
    try {
      for (const endpoint of [testS3Endpoint(), `http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
        const writer = createStrictS3Destination(config({ endpoint_url: endpoint }), run, {});
        const writing = (async () => {
          await writer.write(chunkOf(eventLines(10)), signal);
          await writer.finish(signal);
        })();
        await expect(writing).rejects.toThrow(NonRetryableExportError);
        await expect(writing).rejects.toThrow(`${new URL(endpoint).hostname} ${REFUSED}`);
        await expect(writing).rejects.not.toThrow(/internal service page/);
        await writer.abort();
      }
      expect(requests).toBe(0);
      expect(await keys()).toEqual([]);
    } finally {
      internal.closeAllConnections();
      await new Promise<void>((resolve) => internal.close(() => resolve()));
    }
  });

  describe("credentials: the export's own keys, never the server's unless the operator lends them", () => {
    /** The server's own identity, as the SDK's default chain would find it (its first provider). */
    const SERVER_KEY = 'AKIASERVERIDENTITY';
    const saved = {
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
      AWS_SESSION_TOKEN: process.env.AWS_SESSION_TOKEN,
    };
    /** A stand-in S3 that takes every PUT and records who signed each request. */
    let recorder: Server;
    let recorderUrl: string;
    let signedWith: string[];

    beforeAll(async () => {
      process.env.AWS_ACCESS_KEY_ID = SERVER_KEY;
      process.env.AWS_SECRET_ACCESS_KEY = 'server-secret';
      delete process.env.AWS_SESSION_TOKEN;
      recorder = createServer((request: IncomingMessage, response) => {
        const credential = /Credential=([^/]+)\//.exec(request.headers.authorization ?? '');
        signedWith.push(credential?.[1] ?? 'unsigned');
        request.resume();
        request.once('end', () => response.writeHead(200, { ETag: '"recorded"' }).end());
      });
      await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
      recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    });

    beforeEach(() => {
      signedWith = [];
    });

    afterAll(async () => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      recorder.closeAllConnections();
      await new Promise<void>((resolve) => recorder.close(() => resolve()));
    });

    const keyless = (extra: Record<string, unknown> = {}): Record<string, unknown> => {
      const { aws_access_key_id: _id, aws_secret_access_key: _secret, ...rest } = config(extra);
      return rest;
    };

    async function exportTen(writer: ReturnType<typeof createS3Destination>): Promise<void> {
      await writer.write(chunkOf(eventLines(10)), signal);
      await writer.finish(signal);
    }

    it('fails a run without keys for good, before any request or credential lookup, unless BATCH_EXPORT_S3_SERVER_CREDENTIALS is set', async () => {
      const registry = createBatchExportDestinations({ egress: LOOPBACK_ALLOWED });
      const writers = [
        // The workers' destinations, BATCH_EXPORT_S3_SERVER_CREDENTIALS unset: to S3Mock's bucket…
        registry.S3(keyless(), run),
        // …and to a server that would take anything, with the server's keys in the environment.
        registry.S3(keyless({ endpoint_url: recorderUrl }), run),
        createStrictS3Destination(keyless({ endpoint_url: recorderUrl }), run, {
          egress: LOOPBACK_ALLOWED,
          serverCredentials: false,
        }),
      ];
      for (const writer of writers) {
        const writing = exportTen(writer);
        await expect(writing).rejects.toThrow(NonRetryableExportError);
        await expect(writing).rejects.toThrow(S3_SERVER_CREDENTIALS_REFUSED);
        await writer.abort();
      }
      expect(S3_SERVER_CREDENTIALS_REFUSED).toContain('BATCH_EXPORT_S3_SERVER_CREDENTIALS');
      expect(signedWith).toEqual([]);
      expect(await keys()).toEqual([]);
    });

    it("signs with the export's keys only, even where the server has keys of its own", async () => {
      const destinations = createBatchExportDestinations({
        egress: LOOPBACK_ALLOWED,
        s3ServerCredentials: true,
      });
      await exportTen(
        destinations.S3(config({ endpoint_url: recorderUrl, aws_access_key_id: 'AKIAEXPORTOWNKEY' }), run),
      );
      expect(signedWith.length).toBeGreaterThan(0);
      expect(new Set(signedWith)).toEqual(new Set(['AKIAEXPORTOWNKEY']));
    });

    it("runs an export without keys with the server's identity once BATCH_EXPORT_S3_SERVER_CREDENTIALS allows it", async () => {
      const destinations = createBatchExportDestinations({
        egress: LOOPBACK_ALLOWED,
        s3ServerCredentials: true,
      });
      await exportTen(destinations.S3(keyless({ endpoint_url: recorderUrl }), run));
      expect(signedWith.length).toBeGreaterThan(0);
      expect(new Set(signedWith)).toEqual(new Set([SERVER_KEY]));

      await exportTen(destinations.S3(keyless({ prefix: '' }), run));
      expect(await keys()).toEqual([`${INTERVAL}.jsonl`]);
    });

    it('refuses one key without the other, whatever the setting', async () => {
      const destinations = createBatchExportDestinations({
        egress: LOOPBACK_ALLOWED,
        s3ServerCredentials: true,
      });
      for (const missing of ['aws_access_key_id', 'aws_secret_access_key']) {
        const writing = exportTen(
          destinations.S3(config({ endpoint_url: recorderUrl, [missing]: null }), run),
        );
        await expect(writing).rejects.toThrow(NonRetryableExportError);
        await expect(writing).rejects.toThrow(
          `${missing} is missing: aws_access_key_id and aws_secret_access_key go together`,
        );
      }
      expect(signedWith).toEqual([]);
    });
  });

  it('leaves no multipart upload and no object behind when aborted', async () => {
    const writer = createS3Destination(config(), run);
    // ~11 MB: two 5 MiB parts are uploaded (or in flight) before the abort.
    await writer.write(chunkOf(eventLines(11_000, 0, 1_000)), signal);
    expect(await openUploads()).toBe(1);
    await writer.abort();

    expect(await openUploads()).toBe(0);
    expect(await keys()).toEqual([]);
  });

  it('streams a 12 MB interval as a multipart upload', async () => {
    const rowsPerChunk = 2_000;
    const chunkCount = 6;
    const expected = createHash('sha256');
    let expectedBytes = 0;
    const writer = createS3Destination(config({ prefix: 'big' }), run);

    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 5);
    try {
      for (let chunk = 0; chunk < chunkCount; chunk += 1) {
        const lines = eventLines(rowsPerChunk, chunk * rowsPerChunk, 1_000);
        for (const line of lines) {
          expected.update(line);
          expectedBytes += Buffer.byteLength(line);
        }
        await writer.write(chunkOf(lines, 64 * 1024), signal);
      }
      await writer.finish(signal);
    } finally {
      clearInterval(sampler);
    }
    console.info(
      `S3 destination, ${(expectedBytes / MIB).toFixed(1)} MiB interval: peak RSS growth ${((rssPeak - rssBefore) / MIB).toFixed(1)} MiB`,
    );

    const key = `big/${INTERVAL}.jsonl`;
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(expectedBytes).toBeGreaterThan(12 * MIB);
    expect(head.ContentLength).toBe(expectedBytes);
    // A multipart object's ETag ends with its part count: 5 MiB parts, so three of them.
    expect(head.ETag).toMatch(/-3"$/);
    expect(
      createHash('sha256')
        .update(await read(key))
        .digest('hex'),
    ).toBe(expected.digest('hex'));
    expect(await openUploads()).toBe(0);
  });
});

/** Parquet files are opaque to the writer: magic bytes around random bytes stand in for ClickHouse's output. */
function opaqueParquet(size: number): Buffer {
  return Buffer.concat([Buffer.from('PAR1'), randomBytes(size), Buffer.from('PAR1')]);
}

/** Cleanup after each test, so a red run leaves no bucket behind on a shared server. */
async function emptyAndDeleteBucket(s3: S3Client, bucket: string): Promise<void> {
  const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const upload of uploads.Uploads ?? []) {
    await s3.send(
      new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }),
    );
  }
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  for (const object of listed.Contents ?? []) {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}
