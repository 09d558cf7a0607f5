import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Kafka } from 'kafkajs';
import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient } from '@hogbase/queue';
import {
  createTestDatabase,
  createTestS3Client,
  runProcess,
  splitModeEnv,
  testS3Endpoint,
  type TestDatabase,
} from '@hogbase/test-support';
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
import { managementRequest } from './management-request';

const HOUR = 3_600_000;
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);

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
  let database: TestDatabase;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let capture: AppProcess | undefined;
  let ingestion: AppProcess | undefined;
  let management: AppProcess | undefined;
  let workers: AppProcess | undefined;

  beforeAll(async () => {
    if (brokers.length === 0) {
      throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
    }
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-split-workers-test-'));
    env = {
      ...splitModeEnv({ databaseUrl: database.url, brokers, consumerGroup: `split-workers-${run}`, dataDir }),
      // Management seals the destination's secrets, the workers open them: the keys a deployment
      // shares between the two (without them each would fall back to a key file of its DATA_DIR).
      ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
      BATCH_EXPORT_LAG_SECONDS: '0',
    };
  });

  afterAll(async () => {
    await killApps(capture, ingestion, management, workers);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    s3.destroy();
  });

  /** True once the group has committed, on every partition of the events topic, past its current end. */
  async function committedPastEnd(
    kafka: Kafka,
    groupId: string,
    ends: Map<number, bigint>,
  ): Promise<boolean> {
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

  it(
    'exports the events ingested from posthog-node to S3, each once, nothing outside the range',
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

      // 1. Capture and ingestion take the SDK's events into ClickHouse.
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

      const { PostHog } = await import('posthog-node');
      const client = new PostHog(credentials.project_api_key, {
        host: captureUrl,
        flushAt: 20,
        fetchRetryCount: 3,
      });
      const inside = new Set<string>();
      for (let i = 0; i < 36; i++) {
        const uuid = randomUUID();
        // A minute clear of the hours' edges: capture corrects timestamps by the SDK's clock skew.
        const timestamp = rangeStart + 60_000 + Math.floor((i * 3 * HOUR) / 36);
        inside.add(uuid);
        client.capture({
          distinctId: `user-${run}-${i % 3}`,
          event: 'exported',
          uuid,
          timestamp: new Date(timestamp),
          properties: { i, nested: { ok: true } },
        });
      }
      for (const outside of [rangeStart - 5 * 60_000, rangeEnd + 5 * 60_000, rangeEnd + HOUR]) {
        client.capture({
          distinctId: `user-${run}-x`,
          event: 'outside',
          timestamp: new Date(outside),
          properties: {},
        });
      }
      await client.shutdown();

      // Capture answered 200, so the broker holds the events: ingestion has written them once its
      // group has committed past the topic's current end.
      const kafka = createKafkaClient({ brokers, clientId: `split-workers-${run}` });
      const ends = await topicEnds(kafka);
      await waitFor(
        consuming,
        'committed offsets past the SDK events',
        () => committedPastEnd(kafka, `split-workers-${run}`, ends),
        READY_TIMEOUT_MS,
      );
      expect(await stopApp(ingestion)).toEqual({ code: 0, signal: null });
      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });

      // 2. Management creates the export and the backfill.
      const managementPort = await freePort();
      const managementUrl = `http://127.0.0.1:${managementPort}`;
      const startManagement = async () => {
        const started = startApp('management', { ...env, MANAGEMENT_PORT: String(managementPort) });
        await waitForReady(started, managementUrl);
        return started;
      };
      management = await startManagement();
      const api = (method: string, requestPath: string, body?: unknown) =>
        managementRequest(managementUrl, credentials.personal_api_key, method, requestPath, body);
      const exportsPath = `/api/projects/${credentials.project_id}/batch_exports/`;
      const created = await api('POST', exportsPath, {
        name: 'to S3',
        interval: 'hour',
        destination: {
          type: 'S3',
          config: {
            bucket_name: bucket,
            region: 'us-east-1',
            endpoint_url: testS3Endpoint(),
            prefix: 'events/{year}-{month}-{day}',
            aws_access_key_id: 'test',
            aws_secret_access_key: 'test',
          },
        },
      });
      expect(created.status).toBe(201);
      const exportPath = `${exportsPath}${created.body.id as string}/`;
      const backfill = await api('POST', `${exportPath}backfills/`, {
        start_at: new Date(rangeStart).toISOString(),
        end_at: new Date(rangeEnd).toISOString(),
      });
      expect(backfill.status).toBe(201);
      expect(await stopApp(management)).toEqual({ code: 0, signal: null });

      // 3. The workers (the same Kafka settings as ingestion) run it; management answers on it.
      const workersPort = await freePort();
      workers = startApp('workers', { ...env, WORKERS_PORT: String(workersPort) });
      await waitForReady(workers, `http://127.0.0.1:${workersPort}`);
      management = await startManagement();
      const backfillPath = `${exportPath}backfills/${backfill.body.backfill_id as string}/`;
      await waitFor(
        workers,
        'the backfill to complete',
        async () => {
          const { body } = await api('GET', backfillPath);
          if (body.status === 'Failed') throw new Error(`backfill failed: ${JSON.stringify(body)}`);
          return body.status === 'Completed';
        },
        120_000,
      );
      const runs = await api('GET', `${exportPath}runs/`);
      expect(
        (runs.body.results as Record<string, unknown>[]).map((exportRun) => [
          exportRun.status,
          exportRun.records_completed,
        ]),
      ).toEqual([
        ['Completed', 12],
        ['Completed', 12],
        ['Completed', 12],
      ]);

      const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
      const keys = (listed.Contents ?? []).map((object) => object.Key ?? '');
      expect(keys).toHaveLength(3);
      const exported: Record<string, unknown>[] = [];
      for (const key of keys) {
        const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const text = await object.Body!.transformToString('utf8');
        exported.push(
          ...text
            .trimEnd()
            .split('\n')
            .map((line) => JSON.parse(line) as Record<string, unknown>),
        );
      }
      const uuids = exported.map((row) => row.uuid as string);
      expect(uuids.sort()).toEqual([...inside].sort());
      for (const row of exported) {
        const timestamp = Date.parse(row.timestamp as string);
        expect(timestamp >= rangeStart && timestamp < rangeEnd).toBe(true);
        expect(row.properties).toMatchObject({ nested: { ok: true } });
      }

      expect(await stopApp(workers)).toEqual({ code: 0, signal: null });
      expect(await stopApp(management)).toEqual({ code: 0, signal: null });
    },
    6 * READY_TIMEOUT_MS,
  );
});
