import { S3ServiceException } from '@aws-sdk/client-s3';
import { egressRefusalOf } from '@hogbase/egress';

import { NonRetryableExportError } from '../destination.types';

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
