import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createTestS3Client, testS3Endpoint } from '@hogbase/test-support';
import { startStandaloneForTest, type StandaloneForTest } from './app-process';
import { managementRequest } from './management-request';

const HOUR = 3_600_000;
const gunzipAsync = promisify(gunzip);

/**
 * A batch export end to end on `npm start`: events sent with posthog-node, timestamped over several
 * hours, backfilled through the management API to an S3-compatible server (S3Mock) by the workers,
 * then read back: every event exactly once, nothing outside the range, PostHog's keys and fields.
 */
describe('npm start: a backfill exports the events of its hours to S3, each once', () => {
  let standalone: StandaloneForTest;
  const s3 = createTestS3Client();
  const bucket = `exports-${randomUUID().slice(0, 8)}`;
  /** The range backfilled: three whole hours ending two hours ago. */
  const rangeEnd = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  const rangeStart = rangeEnd - 3 * HOUR;

  beforeAll(async () => {
    const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    standalone = await startStandaloneForTest('hogbase-batch-export-s3-', { BATCH_EXPORT_LAG_SECONDS: '0' });
  });

  afterAll(async () => {
    await standalone?.stop();
    s3.destroy();
  });

  const api = (method: string, path: string, body?: unknown) =>
    managementRequest(standalone.managementUrl, standalone.credentials.personal_api_key, method, path, body);

  it("writes one gzipped JSON-lines object per hour with PostHog's default fields", async () => {
    const { credentials } = standalone;
    // 40 events inside the range, and some just outside it on both sides.
    const { PostHog } = await import('posthog-node');
    const client = new PostHog(credentials.project_api_key, {
      host: standalone.captureUrl,
      flushAt: 20,
      fetchRetryCount: 3,
    });
    const inside = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const uuid = randomUUID();
      // A minute clear of the hours' edges: capture corrects timestamps by the SDK's clock skew.
      const timestamp = rangeStart + 60_000 + Math.floor((i * 3 * HOUR) / 40);
      inside.set(uuid, timestamp);
      client.capture({
        distinctId: `user-${i % 5}`,
        event: 'exported',
        uuid,
        timestamp: new Date(timestamp),
        properties: { i, nested: { ok: true } },
      });
    }
    for (const outside of [rangeStart - 5 * 60_000, rangeEnd + 5 * 60_000, rangeEnd + HOUR]) {
      client.capture({
        distinctId: 'user-x',
        event: 'outside',
        timestamp: new Date(outside),
        properties: {},
      });
    }
    await client.shutdown();

    const created = await api('POST', `/api/projects/${credentials.project_id}/batch_exports/`, {
      name: 'to S3',
      interval: 'hour',
      destination: {
        type: 'S3',
        config: {
          bucket_name: bucket,
          region: 'us-east-1',
          endpoint_url: testS3Endpoint(),
          prefix: 'posthog/{table}/{year}-{month}-{day}',
          aws_access_key_id: 'test',
          aws_secret_access_key: 'test',
          compression: 'gzip',
        },
      },
    });
    expect(created.status).toBe(201);
    const exportId = created.body.id as string;

    // The events are ingested before the backfill looks for the first one.
    await waitFor('the events to be listed', async () => {
      const listed = await api(
        'GET',
        `/api/projects/${credentials.project_id}/events/?limit=100&after=2000-01-01`,
      );
      return listed.status === 200 && (listed.body.results as unknown[]).length === 43;
    });
    const backfill = await api(
      'POST',
      `/api/projects/${credentials.project_id}/batch_exports/${exportId}/backfills/`,
      {
        start_at: new Date(rangeStart).toISOString(),
        end_at: new Date(rangeEnd).toISOString(),
      },
    );
    expect(backfill.status).toBe(201);
    const backfillPath = `/api/projects/${credentials.project_id}/batch_exports/${exportId}/backfills/${backfill.body.backfill_id}/`;
    await waitFor(
      'the backfill to complete',
      async () => (await api('GET', backfillPath)).body.status === 'Completed',
      120_000,
    );
    expect((await api('GET', backfillPath)).body.progress).toEqual({
      total_runs: 3,
      finished_runs: 3,
      progress: 1,
    });

    const runs = await api('GET', `/api/projects/${credentials.project_id}/batch_exports/${exportId}/runs/`);
    expect(
      (runs.body.results as { status: string; records_completed: number }[]).map((run) => run.status),
    ).toEqual(['Completed', 'Completed', 'Completed']);

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
    // PostHog's keys: the prefix with the interval end's date, then `{start}-{end}.jsonl.gz`.
    const iso = (time: number) => new Date(time).toISOString().replace('.000Z', '+00:00');
    const expectedKeys = [0, 1, 2].map((hour) => {
      const [start, end] = [rangeStart + hour * HOUR, rangeStart + (hour + 1) * HOUR];
      return `posthog/events/${iso(end).slice(0, 10)}/${iso(start)}-${iso(end)}.jsonl.gz`;
    });
    expect(keys).toEqual(expectedKeys.sort());

    const exported: Record<string, unknown>[] = [];
    for (const key of keys) {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const text = (await gunzipAsync(Buffer.from(await object.Body!.transformToByteArray()))).toString(
        'utf8',
      );
      exported.push(
        ...text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      );
    }
    const uuids = exported.map((row) => row.uuid as string);
    expect(new Set(uuids).size).toBe(uuids.length);
    expect(uuids.sort()).toEqual([...inside.keys()].sort());
    expect(Object.keys(exported[0])).toEqual([
      'uuid',
      'timestamp',
      '_inserted_at',
      'created_at',
      'event',
      'properties',
      'distinct_id',
      'elements_chain',
      'person_properties',
      'person_id',
    ]);
    expect(exported[0].properties).toMatchObject({ nested: { ok: true } });
  }, 240_000);
});

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
