import { randomBytes } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createTestS3Client } from '@hogbase/test-support';
import { freePort, READY_TIMEOUT_MS, stopApp, waitForApp } from './app-process';
import { BatchExportsApi, captureEvents, eventsAroundRange, readS3Rows } from './batch-export-test.util';
import { SplitModeForTest } from './split-mode-test.util';

const HOUR = 3_600_000;

/**
 * Split mode with the batch-export workers: capture, ingestion, management and workers each run
 * alone (`apps/<app>/src/main.ts`) against one Postgres, a real Kafka broker and ClickHouse, and a
 * backfill created through the management process is run by the workers process to S3.
 *
 * NOTE: chDB, the only ClickHouse of the test machines, is open in one process at a time on a data
 * path, so the processes that open it take turns: ingestion writes the SDK's events and stops;
 * management creates the backfill (which reads the project's first event, opening chDB) and stops;
 * the workers run it while a new management process, which has not opened chDB, reports on it
 * (backfills and runs are in Postgres). With CLICKHOUSE_URL all four run side by side.
 */
describe('split mode: the workers process runs a backfill created through the management process', () => {
  const run = randomBytes(4).toString('hex');
  const s3 = createTestS3Client();
  const bucket = `split-exports-${run}`;
  /** The range backfilled: three whole hours ending two hours ago. */
  const rangeEnd = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  const rangeStart = rangeEnd - 3 * HOUR;
  let split: SplitModeForTest;

  beforeAll(async () => {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    split = await SplitModeForTest.prepare('hogbase-split-workers-test-', `split-workers-${run}`, {
      // Management seals the destination's secrets, the workers open them: the keys a deployment
      // shares between the two (without them each would fall back to a key file of its DATA_DIR).
      ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
      BATCH_EXPORT_LAG_SECONDS: '0',
    });
  });

  afterAll(async () => {
    await split?.cleanUp();
    s3.destroy();
  });

  it(
    'exports the events ingested from posthog-node to S3, each once, nothing outside the range',
    async () => {
      const credentials = await split.bootstrapOwner(`owner-${run}@split.test`);

      // 1. Capture and ingestion take the SDK's events into ClickHouse.
      const { capture, ingestion, captureUrl } = await split.startCaptureAndIngestion();
      const { inside, outside } = eventsAroundRange({ start: rangeStart, end: rangeEnd }, 36, (i) => ({
        event: 'exported',
        distinctId: `user-${run}-${i % 3}`,
        properties: { i, nested: { ok: true } },
      }));
      await captureEvents(captureUrl, credentials.project_api_key, [...inside, ...outside]);

      // Capture answered 200, so the broker holds the events: ingestion has written them once its
      // group has committed past the topic's current end.
      await split.waitForIngestionCaughtUp(ingestion);
      expect(await stopApp(ingestion)).toEqual({ code: 0, signal: null });
      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });

      // 2. Management creates the export and the backfill.
      const managementPort = await freePort();
      let management = await split.start('management', managementPort);
      const api = new BatchExportsApi(management.url, credentials);
      const exportId = await api.createS3Export(bucket, { prefix: 'events/{year}-{month}-{day}' });
      const backfillId = await api.createBackfill(exportId, rangeStart, rangeEnd);
      expect(await stopApp(management.app)).toEqual({ code: 0, signal: null });

      // 3. The workers (the same Kafka settings as ingestion) run it; management, on the same port,
      // answers on it.
      const workers = await split.start('workers');
      management = await split.start('management', managementPort);
      await waitForApp(
        workers.app,
        'the backfill to complete',
        () => api.backfillCompleted(exportId, backfillId),
        120_000,
      );
      expect(
        (await api.runs(exportId)).map((exportRun) => [exportRun.status, exportRun.records_completed]),
      ).toEqual([
        ['Completed', 12],
        ['Completed', 12],
        ['Completed', 12],
      ]);

      const { keys, rows } = await readS3Rows(s3, bucket);
      expect(keys).toHaveLength(3);
      const uuids = rows.map((row) => row.uuid as string);
      expect(uuids.sort()).toEqual(inside.map((event) => event.uuid).sort());
      for (const row of rows) {
        const timestamp = Date.parse(row.timestamp as string);
        expect(timestamp >= rangeStart && timestamp < rangeEnd).toBe(true);
        expect(row.properties).toMatchObject({ nested: { ok: true } });
      }

      expect(await stopApp(workers.app)).toEqual({ code: 0, signal: null });
      expect(await stopApp(management.app)).toEqual({ code: 0, signal: null });
    },
    6 * READY_TIMEOUT_MS,
  );
});
