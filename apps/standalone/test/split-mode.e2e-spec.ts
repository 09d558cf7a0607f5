import { randomBytes } from 'node:crypto';
import { READY_TIMEOUT_MS, stopApp } from './app-process';
import { expectListedBack, sdkScenario, sendWithPosthogNode } from './posthog-node-scenario';
import { SplitModeForTest } from './split-mode-test.util';

/**
 * Split mode, as a platform team deploys it: capture, ingestion and management each run alone
 * (`apps/<app>/src/main.ts`) against one Postgres, a real Kafka broker and ClickHouse.
 *
 * NOTE: there is no ClickHouse server on the test machines, only chDB, which one process at a time
 * may open on a data path. Ingestion therefore runs until it has committed the SDK's events, then
 * stops, and the management app opens the same data path to list them. With CLICKHOUSE_URL the
 * three run side by side; nothing else differs.
 */
describe('split mode: capture, ingestion and management as separate processes over Kafka', () => {
  const run = randomBytes(4).toString('hex');
  let split: SplitModeForTest;

  beforeAll(async () => {
    split = await SplitModeForTest.prepare('hogbase-split-test-', `split-test-${run}`);
  });

  afterAll(async () => {
    await split?.cleanUp();
  });

  it(
    'takes posthog-node events on the capture process and lists them through the management process',
    async () => {
      const credentials = await split.bootstrapOwner(`owner-${run}@split.test`);
      const { capture, ingestion, captureUrl } = await split.startCaptureAndIngestion();

      const scenario = sdkScenario(`split-${run}`);
      await sendWithPosthogNode(captureUrl, credentials.project_api_key, scenario);

      // Capture answered 200, so the broker holds the events: ingestion is done with them once its
      // group has committed past the topic's current end.
      await split.waitForIngestionCaughtUp(ingestion);
      expect(await stopApp(ingestion)).toEqual({ code: 0, signal: null });

      const management = await split.start('management');
      await expectListedBack(management.url, credentials.personal_api_key, credentials.project_id, scenario);
      // Ingestion set the project's ingested_event at its first event (issue 29, defect 6).
      const project = await fetch(`${management.url}/api/projects/${credentials.project_id}/`, {
        headers: { Authorization: `Bearer ${credentials.personal_api_key}` },
      });
      expect(((await project.json()) as { ingested_event?: unknown }).ingested_event).toBe(true);

      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });
      expect(await stopApp(management.app)).toEqual({ code: 0, signal: null });
    },
    4 * READY_TIMEOUT_MS,
  );
});
