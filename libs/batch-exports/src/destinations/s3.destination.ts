import { EgressPolicy } from '@hogbase/egress';

import { NonRetryableExportError } from '../batch-export.errors';
import type { DestinationWriter, ExportChunk, ExportRunInfo, WriteResult } from '../destination.types';
import { parseS3DestinationConfig } from './s3-destination.config';
import { classifyS3Error, S3KeyTemplateError } from './s3.errors';
import { s3ManifestKey } from './s3-key.util';
import { S3Writer, type S3DestinationWriter } from './s3-writer.destination';

export interface S3DestinationOptions {
  /** Strict by default. */
  egress?: EgressPolicy;
  /** BATCH_EXPORT_S3_SERVER_CREDENTIALS: an export without keys runs with the server's own AWS identity. */
  serverCredentials?: boolean;
}

export const S3_SERVER_CREDENTIALS_REFUSED =
  'S3 destination: the export has no aws_access_key_id and aws_secret_access_key, and this server does not lend its own AWS credentials to exports (BATCH_EXPORT_S3_SERVER_CREDENTIALS is off): enter the keys of an identity that may write to the bucket, or have the operator set BATCH_EXPORT_S3_SERVER_CREDENTIALS=true';

export function createS3Destination(
  config: Record<string, unknown>,
  run: ExportRunInfo,
  options: S3DestinationOptions = {},
): DestinationWriter {
  return createS3DestinationWriter(config, run, options);
}

/** A bad config does not throw here: the first `write` or `finish` fails, however the runner calls it. */
export function createS3DestinationWriter(
  config: Record<string, unknown>,
  run: ExportRunInfo,
  options: S3DestinationOptions = {},
): S3DestinationWriter {
  try {
    const parsed = parseS3DestinationConfig(config);
    // SECURITY: without keys the SDK signs with the server's own identity, lent to every member
    // who can save an export, for any bucket it can write. Refused before a client exists.
    if (parsed.accessKeyId === null && options.serverCredentials !== true) {
      throw new NonRetryableExportError(S3_SERVER_CREDENTIALS_REFUSED);
    }
    // A bad prefix fails before any byte moves, non-retryable as PostHog's InvalidS3Key.
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
