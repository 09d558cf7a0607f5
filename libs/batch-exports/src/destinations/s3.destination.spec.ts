import { Readable } from 'node:stream';

import { NonRetryableExportError } from '../batch-export.errors';
import type { ExportRunInfo } from '../destination.types';
import {
  formatPythonTemplate,
  posixJoin,
  pythonIsoFormat,
  s3ManifestKey,
  s3ObjectKey,
  s3TemplateVariables,
} from './s3-key.util';
import { createS3Destination, S3_SERVER_CREDENTIALS_REFUSED } from './s3.destination';
import { S3KeyTemplateError } from './s3.errors';

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
