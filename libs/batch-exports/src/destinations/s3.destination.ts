import { EgressPolicy } from '@hogbase/egress';

import {
  NonRetryableExportError,
  type DestinationWriter,
  type ExportChunk,
  type ExportRunInfo,
  type WriteResult,
} from '../destination.types';
import { parseS3DestinationConfig } from './s3-destination.config';
import { classifyS3Error } from './s3.errors';
import { S3KeyTemplateError, s3ManifestKey } from './s3-key.util';
import { S3Writer, type S3DestinationWriter } from './s3-writer.destination';

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
    // Fail on a bad prefix before any byte moves, non-retryable as PostHog's InvalidS3Key
    // (posthog/temporal/batch_exports/s3_batch_export.py).
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

/** A run with a bad config: every write and finish fails with the same error. */
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
