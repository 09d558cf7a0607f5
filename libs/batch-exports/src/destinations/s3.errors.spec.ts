import { S3ServiceException } from '@aws-sdk/client-s3';

import { NonRetryableExportError } from '../batch-export.errors';
import { classifyS3Error } from './s3.errors';

function serviceError(name: string, status: number): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
}

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
