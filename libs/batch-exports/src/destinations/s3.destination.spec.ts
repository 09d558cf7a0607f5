import { Readable } from 'node:stream';

import { S3ServiceException } from '@aws-sdk/client-s3';

import { NonRetryableExportError, type ExportRunInfo } from '../destination.types';
import {
  formatPythonTemplate,
  posixJoin,
  pythonIsoFormat,
  S3KeyTemplateError,
  s3ManifestKey,
  s3ObjectKey,
  s3TemplateVariables,
} from './s3-key.util';
import {
  classifyS3Error,
  createS3Destination,
  parseS3DestinationConfig,
  S3_SERVER_CREDENTIALS_REFUSED,
} from './s3.destination';

/** An export's own keys (the tests' S3 takes any). */
const KEYS = { aws_access_key_id: 'AKIAEXAMPLE', aws_secret_access_key: 'secret' };

function runInfo(overrides: Partial<ExportRunInfo> = {}): ExportRunInfo {
  return {
    runId: 'run-1',
    batchExportId: 'export-1',
    teamId: 1,
    model: 'events',
    dataIntervalStart: new Date('2023-07-19T23:00:00Z'),
    dataIntervalEnd: new Date('2023-07-20T00:00:00Z'),
    ...overrides,
  };
}

function serviceError(name: string, status: number): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
}

describe('S3 keys', () => {
  it('formats interval bounds as Python isoformat of an aware UTC datetime', () => {
    expect(pythonIsoFormat(new Date('2023-07-20T00:00:00Z'))).toBe('2023-07-20T00:00:00+00:00');
    expect(pythonIsoFormat(new Date('2023-07-20T00:00:00.250Z'))).toBe('2023-07-20T00:00:00.250000+00:00');
  });

  it('offers the template variables PostHog does, from data_interval_end, zero-padded in UTC', () => {
    const run = runInfo({ dataIntervalEnd: new Date('2024-02-03T04:05:06Z'), model: 'persons' });
    expect(s3TemplateVariables(run)).toEqual({
      year: '2024',
      month: '02',
      day: '03',
      hour: '04',
      minute: '05',
      second: '06',
      data_interval_start: '2023-07-19T23:00:00+00:00',
      data_interval_end: '2024-02-03T04:05:06+00:00',
      table: 'persons',
    });
  });

  it('names a single-file object {start}-{end}.jsonl with the compression extension', () => {
    const key = s3ObjectKey(runInfo(), {
      prefix: 'posthog/{table}/{year}-{month}-{day}',
      fileFormat: 'JSONLines',
      compression: 'gzip',
      fileNumber: null,
    });
    expect(key).toBe(
      'posthog/events/2023-07-20/2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00.jsonl.gz',
    );
  });

  it('numbers files from 0 when max_file_size_mb is set, and appends the Parquet compression too', () => {
    const options = {
      prefix: 'exports',
      fileFormat: 'Parquet',
      compression: 'snappy',
      fileNumber: 0,
    } as const;
    expect(s3ObjectKey(runInfo(), options)).toBe(
      'exports/2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00-0.parquet.sz',
    );
    expect(
      s3ObjectKey(runInfo(), { ...options, fileFormat: 'JSONLines', compression: 'zstd', fileNumber: 2 }),
    ).toBe('exports/2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00-2.jsonl.zst');
  });

  it('strips a leading slash and normalizes the key as posixpath.relpath(key, "/") does', () => {
    const options = { fileFormat: 'JSONLines', compression: null, fileNumber: null } as const;
    expect(s3ObjectKey(runInfo(), { ...options, prefix: '/a//b/./c/' })).toBe(
      'a/b/c/2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00.jsonl',
    );
    expect(s3ObjectKey(runInfo(), { ...options, prefix: '' })).toBe(
      '2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00.jsonl',
    );
    expect(s3ManifestKey(runInfo(), '/exports/{hour}')).toBe(
      'exports/00/2023-07-19T23:00:00+00:00-2023-07-20T00:00:00+00:00_manifest.json',
    );
  });

  it('writes None for the start of a run of everything before its end, as Python formats None', () => {
    const key = s3ObjectKey(runInfo({ dataIntervalStart: null }), {
      prefix: '{data_interval_start}',
      fileFormat: 'JSONLines',
      compression: null,
      fileNumber: null,
    });
    expect(key).toBe('None/None-2023-07-20T00:00:00+00:00.jsonl');
  });

  it('joins like posixpath.join', () => {
    expect(posixJoin('a', 'b')).toBe('a/b');
    expect(posixJoin('a/', 'b')).toBe('a/b');
    expect(posixJoin('', 'b')).toBe('b');
    expect(posixJoin('a', '/b')).toBe('/b');
  });

  it('reads {{ and }} as literal braces, as str.format does', () => {
    expect(formatPythonTemplate('{{x}}-{year}}}', { year: '2023' })).toBe('{x}-2023}');
  });

  it.each([
    ['{unknown}', 'unknown variable "{unknown}"'],
    ['{}', 'empty "{}"'],
    ['{year', 'never closed'],
    ['year}', 'single "}"'],
    ['{year:>4}', 'only plain names'],
    ['{year!r}', 'only plain names'],
  ])('refuses the prefix %s', (prefix, message) => {
    expect(() => formatPythonTemplate(prefix, { year: '2023' })).toThrow(S3KeyTemplateError);
    expect(() => formatPythonTemplate(prefix, { year: '2023' })).toThrow(message);
  });
});

describe('S3 destination config', () => {
  it('reads PostHog keys with their defaults', () => {
    const config = parseS3DestinationConfig({ bucket_name: 'b', region: 'eu-west-1', prefix: 'p' });
    expect(config).toMatchObject({
      bucketName: 'b',
      region: 'eu-west-1',
      prefix: 'p',
      fileFormat: 'JSONLines',
      compression: null,
      maxFileSizeBytes: null,
      endpointUrl: null,
      useVirtualStyleAddressing: false,
    });
    expect(parseS3DestinationConfig({ bucket_name: 'b', max_file_size_mb: 2 }).maxFileSizeBytes).toBe(
      2 * 1024 * 1024,
    );
  });

  it.each([
    [{ prefix: 'x' }, 'bucket_name'],
    [{ bucket_name: 'b', file_format: 'CSV' }, 'file_format="CSV"'],
    [
      { bucket_name: 'b', compression: 'snappy' },
      'compression="snappy": supported for JSONLines: gzip, brotli, zstd',
    ],
    [{ bucket_name: 'b', file_format: 'Parquet', compression: 'xz' }, 'compression="xz"'],
    [{ bucket_name: 'b', max_file_size_mb: -1 }, 'max_file_size_mb=-1'],
    [{ bucket_name: 'b', endpoint_url: 'not a url' }, 'endpoint_url'],
    [
      { bucket_name: 'b', aws_access_key_id: 'AKIAEXAMPLE' },
      'aws_secret_access_key is missing: aws_access_key_id and aws_secret_access_key go together',
    ],
    [
      { bucket_name: 'b', aws_secret_access_key: 'secret', aws_access_key_id: '' },
      'aws_access_key_id is missing',
    ],
  ])('refuses %j as a non-retryable error', (config, message) => {
    expect(() => parseS3DestinationConfig(config)).toThrow(NonRetryableExportError);
    expect(() => parseS3DestinationConfig(config)).toThrow(message);
  });

  it('asks ClickHouse for Parquet compression and never streams a Parquet interval as more than one chunk unless split', () => {
    const parquet = createS3Destination(
      { ...KEYS, bucket_name: 'b', file_format: 'Parquet', compression: 'zstd' },
      runInfo(),
    );
    expect(parquet.format).toBe('Parquet');
    expect(parquet.maxChunkRows).toBeUndefined();
    expect(parquet.resumable).toBe(false);
    expect(parquet).toMatchObject({
      parquetCompression: 'zstd',
      clickHouseSettings: { output_format_parquet_compression_method: 'zstd' },
    });
    const split = createS3Destination(
      { ...KEYS, bucket_name: 'b', file_format: 'Parquet', max_file_size_mb: 10 },
      runInfo(),
    );
    expect(split.maxChunkRows).toBe(10 * 1024);
    expect(split).toMatchObject({ parquetCompression: 'none' });
    const jsonLines = createS3Destination({ ...KEYS, bucket_name: 'b' }, runInfo());
    expect(jsonLines.format).toBe('JSONEachRow');
    expect(jsonLines).toMatchObject({ parquetCompression: null, clickHouseSettings: {} });
  });

  it('fails an export without keys for good unless the server lends its credentials (BATCH_EXPORT_S3_SERVER_CREDENTIALS)', async () => {
    const signal = new AbortController().signal;
    for (const options of [undefined, {}, { serverCredentials: false }]) {
      const writer = createS3Destination({ bucket_name: 'b', file_format: 'Parquet' }, runInfo(), options);
      const write = writer.write({ body: Readable.from([]), records: 0, cursor: 'c' }, signal);
      await expect(write).rejects.toThrow(NonRetryableExportError);
      await expect(write).rejects.toThrow(S3_SERVER_CREDENTIALS_REFUSED);
      await expect(writer.finish(signal)).rejects.toThrow(S3_SERVER_CREDENTIALS_REFUSED);
      await expect(writer.abort()).resolves.toBeUndefined();
    }
    const lent = createS3Destination({ bucket_name: 'b', file_format: 'Parquet' }, runInfo(), {
      serverCredentials: true,
    });
    expect(lent).toMatchObject({ format: 'Parquet', parquetCompression: 'none' });
    await lent.abort();
  });

  it('fails the first write with a non-retryable error for a prefix with an unknown variable', async () => {
    const writer = createS3Destination({ ...KEYS, bucket_name: 'b', prefix: 'x/{team}' }, runInfo());
    const write = writer.write(
      { body: Readable.from([]), records: 0, cursor: 'c' },
      new AbortController().signal,
    );
    await expect(write).rejects.toThrow(NonRetryableExportError);
    await expect(write).rejects.toThrow('unknown variable "{team}"');
    await expect(writer.finish(new AbortController().signal)).rejects.toThrow(NonRetryableExportError);
    await expect(writer.abort()).resolves.toBeUndefined();
  });
});

describe('S3 errors', () => {
  it.each([
    ['AccessDenied', 403],
    ['NoSuchBucket', 404],
    ['InvalidAccessKeyId', 403],
    ['SignatureDoesNotMatch', 403],
    ['PermanentRedirect', 301],
    ['InvalidArgument', 400],
  ])('makes %s non-retryable', (name, status) => {
    const classified = classifyS3Error(serviceError(name, status), 'upload');
    expect(classified).toBeInstanceOf(NonRetryableExportError);
    expect(classified.message).toContain(name);
  });

  it.each([
    ['InternalError', 500],
    ['ServiceUnavailable', 503],
    ['SlowDown', 503],
    ['RequestTimeout', 400],
    ['TooManyRequests', 429],
  ])('leaves %s retryable', (name, status) => {
    expect(classifyS3Error(serviceError(name, status), 'upload')).not.toBeInstanceOf(NonRetryableExportError);
  });

  it('leaves a network error retryable', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(classifyS3Error(refused, 'upload')).toBe(refused);
  });
});
