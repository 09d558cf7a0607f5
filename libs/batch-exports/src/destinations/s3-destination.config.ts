import { NonRetryableExportError } from '../batch-export.errors';
import type { S3Compression, S3FileFormat } from './s3-key.util';

const MIB = 1024 * 1024;

const JSONLINES_COMPRESSIONS = ['gzip', 'brotli', 'zstd'] as const;
/** ClickHouse's `output_format_parquet_compression_method` values PostHog also accepts. */
const PARQUET_COMPRESSIONS = ['zstd', 'snappy', 'gzip', 'lz4', 'brotli'] as const;

export type JsonLinesCompression = (typeof JSONLINES_COMPRESSIONS)[number];
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

/** `S3InsertInputs` of products/batch_exports/backend/temporal/destinations/s3_batch_export.py. */
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
  // As botocore's PartialCredentialsError: never a cue to look for credentials elsewhere.
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

/** Null, absent and 0 mean one object per interval (PostHog tests truthiness). */
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
