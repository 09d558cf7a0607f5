import { randomUUID } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createTestS3Client } from '@hogbase/test-support';
import { READY_TIMEOUT_MS, startStandaloneForTest, waitForApp, type StandaloneForTest } from './app-process';
import { BatchExportsApi, captureEvents, eventsAroundRange, readS3Rows } from './batch-export-test.util';

const HOUR = 3_600_000;

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
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    standalone = await startStandaloneForTest('hogbase-batch-export-s3-', { BATCH_EXPORT_LAG_SECONDS: '0' });
    // Starting npm start takes longer than Jest's 30 s on a loaded machine.
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await standalone?.stop();
    s3.destroy();
  });

  it("writes one gzipped JSON-lines object per hour with PostHog's default fields", async () => {
    const { credentials } = standalone;
    const api = new BatchExportsApi(standalone.managementUrl, credentials);
    // 40 events inside the range, and some just outside it on both sides.
    const { inside, outside } = eventsAroundRange({ start: rangeStart, end: rangeEnd }, 40, (i) => ({
      event: 'exported',
      distinctId: `user-${i % 5}`,
      properties: { i, nested: { ok: true } },
    }));
    await captureEvents(standalone.captureUrl, credentials.project_api_key, [...inside, ...outside]);
    const exportId = await api.createS3Export(bucket, {
      prefix: 'posthog/{table}/{year}-{month}-{day}',
      compression: 'gzip',
    });

    // The events are ingested before the backfill looks for the first one.
    await waitForApp(standalone.server, 'the events to be listed', async () => {
      const listed = await api.request(
        'GET',
        `/api/projects/${credentials.project_id}/events/?limit=100&after=2000-01-01`,
      );
      return listed.status === 200 && (listed.body.results as unknown[]).length === 43;
    });
    const backfillId = await api.createBackfill(exportId, rangeStart, rangeEnd);
    await waitForApp(
      standalone.server,
      'the backfill to complete',
      () => api.backfillCompleted(exportId, backfillId),
      120_000,
    );
    expect((await api.backfill(exportId, backfillId)).progress).toEqual({
      total_runs: 3,
      finished_runs: 3,
      progress: 1,
    });
    expect((await api.runs(exportId)).map((run) => run.status)).toEqual([
      'Completed',
      'Completed',
      'Completed',
    ]);

    const { keys, rows: exported } = await readS3Rows(s3, bucket);
    // PostHog's keys: the prefix with the interval end's date, then `{start}-{end}.jsonl.gz`.
    const iso = (time: number) => new Date(time).toISOString().replace('.000Z', '+00:00');
    const expectedKeys = [0, 1, 2].map((hour) => {
      const [start, end] = [rangeStart + hour * HOUR, rangeStart + (hour + 1) * HOUR];
      return `posthog/events/${iso(end).slice(0, 10)}/${iso(start)}-${iso(end)}.jsonl.gz`;
    });
    expect(keys).toEqual(expectedKeys.sort());

    const uuids = exported.map((row) => row.uuid as string);
    expect(new Set(uuids).size).toBe(uuids.length);
    expect(uuids.sort()).toEqual(inside.map((event) => event.uuid).sort());
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
