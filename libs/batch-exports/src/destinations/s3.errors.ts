import { S3ServiceException } from '@aws-sdk/client-s3';
import { egressRefusalOf } from '@hogbase/egress';

import { NonRetryableExportError } from '../batch-export.errors';

/** A prefix Python's `str.format` would refuse (PostHog's run fails with `InvalidS3Key`). */
export class S3KeyTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'S3KeyTemplateError';
  }
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

/** A 4xx other than a timeout or a throttle cannot get better by waiting; 5xx and network errors are retried. */
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
