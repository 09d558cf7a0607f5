import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient } from '@hogbase/queue';
import { createTestDatabase, runProcess, splitModeEnv, type TestDatabase } from '@hogbase/test-support';
import {
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  startApp,
  stopApp,
  waitFor,
  waitForReady,
  type AppProcess,
} from './app-process';
import { expectListedBack, sdkScenario, sendWithPosthogNode } from './posthog-node-scenario';

const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);

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
  let database: TestDatabase;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let capture: AppProcess | undefined;
  let ingestion: AppProcess | undefined;
  let management: AppProcess | undefined;

  beforeAll(async () => {
    if (brokers.length === 0) {
      throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
    }
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-split-test-'));
    env = splitModeEnv({ databaseUrl: database.url, brokers, consumerGroup: `split-test-${run}`, dataDir });
  });

  afterAll(async () => {
    await killApps(capture, ingestion, management);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Offsets of the events topic's partitions past everything written so far. */
  async function topicEnds(kafka: Kafka): Promise<Map<number, bigint>> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(EVENTS_TOPIC);
      return new Map(offsets.map(({ partition, high }) => [partition, BigInt(high)]));
    } finally {
      await admin.disconnect();
    }
  }

  /** True once the ingestion group has committed at least `ends` on every partition. */
  async function committedPast(kafka: Kafka, groupId: string, ends: Map<number, bigint>): Promise<boolean> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [topic] = await admin.fetchOffsets({ groupId, topics: [EVENTS_TOPIC] });
      const committed = new Map(topic.partitions.map(({ partition, offset }) => [partition, BigInt(offset)]));
      return [...ends].every(([partition, end]) => end === 0n || (committed.get(partition) ?? -1n) >= end);
    } finally {
      await admin.disconnect();
    }
  }

  it(
    'takes posthog-node events on the capture process and lists them through the management process',
    async () => {
      const bootstrap = await runProcess(
        'npm',
        ['run', 'admin', '--', 'bootstrap', '--email', `owner-${run}@split.test`],
        { cwd: REPO_ROOT, env, timeoutMs: 60_000 },
      );
      expect({ code: bootstrap.code, stderr: bootstrap.stderr }).toEqual({ code: 0, stderr: '' });
      const credentials = JSON.parse(bootstrap.stdout) as {
        personal_api_key: string;
        project_id: number;
        project_api_key: string;
      };

      const [capturePort, ingestionPort] = [await freePort(), await freePort()];
      capture = startApp('capture', { ...env, CAPTURE_PORT: String(capturePort) });
      ingestion = startApp('ingestion', { ...env, INGESTION_PORT: String(ingestionPort) });
      const captureUrl = `http://127.0.0.1:${capturePort}`;
      await waitForReady(capture, captureUrl);
      await waitForReady(ingestion, `http://127.0.0.1:${ingestionPort}`);
      const consuming = ingestion;
      await waitFor(consuming, 'consumer start', () =>
        Promise.resolve(consuming.output().includes('ingestion consuming')),
      );

      const scenario = sdkScenario(`split-${run}`);
      await sendWithPosthogNode(captureUrl, credentials.project_api_key, scenario);

      // Capture answered 200, so the broker holds the events: ingestion is done with them once its
      // group has committed past the topic's current end.
      const kafka = createKafkaClient({ brokers, clientId: `split-test-${run}` });
      const ends = await topicEnds(kafka);
      await waitFor(
        consuming,
        'committed offsets past the SDK events',
        () => committedPast(kafka, `split-test-${run}`, ends),
        READY_TIMEOUT_MS,
      );
      expect(await stopApp(ingestion)).toEqual({ code: 0, signal: null });

      const managementPort = await freePort();
      management = startApp('management', { ...env, MANAGEMENT_PORT: String(managementPort) });
      const managementUrl = `http://127.0.0.1:${managementPort}`;
      await waitForReady(management, managementUrl);
      await expectListedBack(managementUrl, credentials.personal_api_key, credentials.project_id, scenario);

      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });
      expect(await stopApp(management)).toEqual({ code: 0, signal: null });
    },
    4 * READY_TIMEOUT_MS,
  );
});
