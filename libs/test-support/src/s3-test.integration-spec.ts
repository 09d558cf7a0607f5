import { randomBytes } from 'node:crypto';

import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

import { createTestS3Client } from './index';

const MIB = 1024 * 1024;
/** S3's smallest part (all but the last); 12 MiB in 5 MiB parts is three parts. */
const PART_SIZE = 5 * MIB;

describe('the S3 test server', () => {
  let s3: S3Client;

  beforeAll(() => {
    s3 = createTestS3Client();
  });

  afterAll(() => {
    s3.destroy();
  });

  it('stores a multipart upload, lists it and gives it back byte for byte', async () => {
    const bucket = `hogbase-test-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const key = 'batch-exports/2026-01-01/events.jsonl';
    const content = randomBytes(12 * MIB);

    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    let bucketDeleted = false;
    try {
      const uploadedParts = new Set<number>();
      const upload = new Upload({
        client: s3,
        params: { Bucket: bucket, Key: key, Body: content, ContentType: 'application/x-ndjson' },
        partSize: PART_SIZE,
        queueSize: 2,
        leavePartsOnError: false,
      });
      upload.on('httpUploadProgress', (progress) => {
        if (progress.part !== undefined) uploadedParts.add(progress.part);
      });
      const uploaded = await upload.done();

      expect([...uploadedParts].sort()).toEqual([1, 2, 3]);
      // A multipart object's ETag is the digest of its parts' digests, suffixed with the part count.
      expect(uploaded.ETag).toMatch(/^"[0-9a-f]{32}-3"$/);

      const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      expect(listed.Contents?.map((object) => ({ key: object.Key, size: object.Size }))).toEqual([
        { key, size: content.length },
      ]);

      const read = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(read.ContentLength).toBe(content.length);
      expect(read.ETag).toBe(uploaded.ETag);
      const readBack = Buffer.from(await read.Body!.transformToByteArray());
      expect(readBack.length).toBe(content.length);
      expect(readBack.equals(content)).toBe(true);

      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      const afterDelete = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      expect(afterDelete.KeyCount).toBe(0);

      await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
      bucketDeleted = true;
      const buckets = await s3.send(new ListBucketsCommand({}));
      expect(buckets.Buckets?.map((entry) => entry.Name) ?? []).not.toContain(bucket);
    } finally {
      if (!bucketDeleted) await emptyAndDeleteBucket(s3, bucket);
    }
  });
});

/** Cleanup after a failed assertion, so a red run leaves no bucket behind on a shared server. */
async function emptyAndDeleteBucket(s3: S3Client, bucket: string): Promise<void> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  for (const object of listed.Contents ?? []) {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}
