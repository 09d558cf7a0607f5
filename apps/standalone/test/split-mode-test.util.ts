import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient } from '@hogbase/queue';
import { createTestDatabase, runProcess, splitModeEnv, type TestDatabase } from '@hogbase/test-support';
import {
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  startApp,
  waitForApp,
  waitForReady,
  type AppProcess,
} from './app-process';

export interface BootstrapCredentials {
  personal_api_key: string;
  project_id: number;
  project_api_key: string;
}

/**
 * A split deployment: a new Postgres database, a temporary DATA_DIR, npm test's broker, each app run
 * alone. cleanUp() kills whatever app is still running.
 */
export class SplitModeForTest {
  private readonly apps: AppProcess[] = [];

  private constructor(
    readonly env: NodeJS.ProcessEnv,
    private readonly brokers: string[],
    private readonly consumerGroup: string,
    private readonly database: TestDatabase,
    private readonly dataDir: string,
  ) {}

  /** `splitModeEnv` plus `extraEnv`. */
  static async prepare(
    tempPrefix: string,
    consumerGroup: string,
    extraEnv: NodeJS.ProcessEnv = {},
  ): Promise<SplitModeForTest> {
    const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
    if (brokers.length === 0) {
      throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
    }
    const database = await createTestDatabase();
    const dataDir = await mkdtemp(path.join(tmpdir(), tempPrefix));
    const env = {
      ...splitModeEnv({ databaseUrl: database.url, brokers, consumerGroup, dataDir }),
      ...extraEnv,
    };
    return new SplitModeForTest(env, brokers, consumerGroup, database, dataDir);
  }

  /** As an operator does before starting the apps. */
  async bootstrapOwner(email: string): Promise<BootstrapCredentials> {
    const bootstrap = await runProcess('npm', ['run', 'admin', '--', 'bootstrap', '--email', email], {
      cwd: REPO_ROOT,
      env: this.env,
      timeoutMs: 60_000,
    });
    expect({ code: bootstrap.code, stderr: bootstrap.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(bootstrap.stdout) as BootstrapCredentials;
  }

  /** On a free port unless given. */
  async start(
    name: 'capture' | 'ingestion' | 'management' | 'workers',
    port?: number,
  ): Promise<{ app: AppProcess; url: string }> {
    const listenOn = port ?? (await freePort());
    const app = startApp(name, { ...this.env, [`${name.toUpperCase()}_PORT`]: String(listenOn) });
    this.apps.push(app);
    const url = `http://127.0.0.1:${listenOn}`;
    await waitForReady(app, url);
    return { app, url };
  }

  async startCaptureAndIngestion(): Promise<{
    capture: AppProcess;
    ingestion: AppProcess;
    captureUrl: string;
  }> {
    const [capture, ingestion] = await Promise.all([this.start('capture'), this.start('ingestion')]);
    await waitForApp(ingestion.app, 'consumer start', () =>
      Promise.resolve(ingestion.app.output().includes('ingestion consuming')),
    );
    return { capture: capture.app, ingestion: ingestion.app, captureUrl: capture.url };
  }

  /**
   * Until ingestion's group has committed past the events topic's current end on every partition.
   * Called after capture's 200s, so every event is written when this returns.
   */
  async waitForIngestionCaughtUp(ingestion: AppProcess): Promise<void> {
    const kafka = createKafkaClient({ brokers: this.brokers, clientId: `${this.consumerGroup}-test` });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(EVENTS_TOPIC);
      const ends = new Map(offsets.map(({ partition, high }) => [partition, BigInt(high)]));
      await waitForApp(
        ingestion,
        'committed offsets past the SDK events',
        async () => {
          const [topic] = await admin.fetchOffsets({ groupId: this.consumerGroup, topics: [EVENTS_TOPIC] });
          const committed = new Map(
            topic.partitions.map(({ partition, offset }) => [partition, BigInt(offset)]),
          );
          return [...ends].every(
            ([partition, end]) => end === 0n || (committed.get(partition) ?? -1n) >= end,
          );
        },
        READY_TIMEOUT_MS,
      );
    } finally {
      await admin.disconnect();
    }
  }

  async cleanUp(): Promise<void> {
    await killApps(...this.apps);
    await this.database.drop();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
