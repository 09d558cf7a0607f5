import { NonRetryableExportError } from '../batch-export.errors';
import { parseS3DestinationConfig } from './s3-destination.config';

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
});
