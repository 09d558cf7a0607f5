import { S3Client } from '@aws-sdk/client-s3';

/** The S3-compatible server `npm test` started (or the one the environment gave it). */
export function testS3Endpoint(): string {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) {
    throw new Error(
      'S3_ENDPOINT is not set: this test needs an S3-compatible server. Run it through `npm test` ' +
        '(it starts S3Mock), or set S3_ENDPOINT=http://host:port (path-style, e.g. `node tools/s3-server.mjs start`).',
    );
  }
  return endpoint;
}

/** Path-style URLs (S3Mock serves no bucket subdomains); the region and credentials only satisfy the SDK. */
export function createTestS3Client(endpoint: string = testS3Endpoint()): S3Client {
  return new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'hogbase-test', secretAccessKey: 'hogbase-test' },
  });
}
