import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient } from '@hogbase/queue';
import {
  BIN_DIR,
  freePort,
  isRunning,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  runProcess,
  splitModeEnv,
  startApp,
  stopApp,
  waitFor,
  waitForReady,
  type AppProcess,
} from '@hogbase/test-support';
import { startKafkaServer, type KafkaServer } from './kafka-server';
import { startPostgresServer, type PostgresServer } from './postgres-server';

const CLICKHOUSE_DATABASE = 'hogbase';
const DRAIN_TIMEOUT_MS = 180_000;

export type ServiceName = 'capture' | 'ingestion';

/** One service's process, restarted by the suite as often as a scenario needs. */
class ServiceSlot {
  app: AppProcess | undefined;
  /** Exits the suite did not cause: what the fault suite exists to rule out. */
  readonly unexpectedExits: string[] = [];
  /** Everything each process of this slot printed, oldest first. */
  private readonly outputs: string[] = [];

  constructor(
    readonly name: ServiceName,
    readonly url: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async start(): Promise<void> {
    const app = startApp(this.name, this.env);
    this.app = app;
    void app.exited.then((status) => {
      if (this.app === app) {
        this.unexpectedExits.push(
          `${this.name} exited on its own (code ${String(status.code)}, signal ${String(status.signal)}):\n${app.output()}`,
        );
        this.app = undefined;
      }
      this.outputs.push(app.output());
    });
    await waitFor(app, 'its probe server', async () => {
      try {
        await fetch(`${this.url}/_health`);
        return true;
      } catch {
        return false;
      }
    });
  }

  async waitReady(): Promise<void> {
    if (!this.app) throw new Error(`${this.name} is not running`);
    await waitForReady(this.app, this.url);
  }

  /** SIGTERM, as Kubernetes stops a pod: the exit status (the app is gone after). */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const app = this.app;
    if (!app) throw new Error(`${this.name} is not running`);
    this.app = undefined;
    return stopApp(app);
  }

  /** kill -9: no drain, no goodbye to the consumer group. */
  async kill(): Promise<void> {
    const app = this.app;
    if (!app) throw new Error(`${this.name} is not running`);
    this.app = undefined;
    await killApps(app);
  }

  /** `/_ready`'s status code now (0: no answer). */
  async readiness(): Promise<number> {
    try {
      return (await fetch(`${this.url}/_ready`, { signal: AbortSignal.timeout(5_000) })).status;
    } catch {
      return 0;
    }
  }

  /** The current process's output since it started. */
  output(): string {
    return this.app?.output() ?? '';
  }

  /**
   * The lines at warn level or above that every process of this slot printed (pino JSON), counted
   * by message: what an operator reads during an outage.
   */
  warnings(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const line of [...this.outputs, this.output()].join('\n').split('\n')) {
      if (!/"level":(40|50|60)\b/.test(line)) continue;
      const message = (JSON.parse(line) as { msg?: string }).msg ?? line;
      counts[message] = (counts[message] ?? 0) + 1;
    }
    return counts;
  }

  async destroy(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    await killApps(app);
  }
}

export interface ListedEvents {
  /** The uuids the events listing reads (FINAL), with repeats if any. */
  uuids: string[];
  /** Rows before ClickHouse merges the redelivered ones away. */
  rawRows: number;
}

/**
 * The split deployment a platform team runs, on engines the suite controls: its own PostgreSQL
 * server, its own Kafka broker, chDB under a temporary data folder; capture and ingestion each as
 * `apps/<app>/src/main.ts`, on fixed ports so that a restarted one is where the sender expects it.
 */
export class SplitDeployment {
  readonly capture: ServiceSlot;
  readonly ingestion: ServiceSlot;

  private constructor(
    readonly postgres: PostgresServer,
    readonly kafka: KafkaServer,
    readonly project: { id: number; apiKey: string },
    private readonly dataDir: string,
    private readonly groupId: string,
    env: NodeJS.ProcessEnv,
    ports: { capture: number; ingestion: number },
  ) {
    this.capture = new ServiceSlot('capture', `http://127.0.0.1:${ports.capture}`, {
      ...env,
      CAPTURE_PORT: String(ports.capture),
    });
    this.ingestion = new ServiceSlot('ingestion', `http://127.0.0.1:${ports.ingestion}`, {
      ...env,
      INGESTION_PORT: String(ports.ingestion),
    });
  }

  static async start(log: (message: string) => void): Promise<SplitDeployment> {
    const run = randomBytes(4).toString('hex');
    const postgres = await startPostgresServer();
    let kafka: KafkaServer | undefined;
    let dataDir: string | undefined;
    try {
      kafka = await startKafkaServer(log);
      dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-faults-'));
      const groupId = `faults-${run}`;
      const env = {
        ...splitModeEnv({
          databaseUrl: postgres.appUrl,
          brokers: [kafka.brokers],
          consumerGroup: groupId,
          dataDir,
        }),
        CLICKHOUSE_DATABASE,
      };

      const bootstrap = await runProcess(
        'npm',
        ['run', '--silent', 'admin', '--', 'bootstrap', '--email', `owner-${run}@faults.test`],
        { cwd: REPO_ROOT, env, timeoutMs: READY_TIMEOUT_MS },
      );
      if (bootstrap.code !== 0)
        throw new Error(`admin bootstrap failed:\n${bootstrap.stdout}${bootstrap.stderr}`);
      const credentials = JSON.parse(bootstrap.stdout) as { project_id: number; project_api_key: string };

      const deployment = new SplitDeployment(
        postgres,
        kafka,
        { id: credentials.project_id, apiKey: credentials.project_api_key },
        dataDir,
        groupId,
        env,
        { capture: await freePort(), ingestion: await freePort() },
      );
      // Ingestion first: it migrates ClickHouse and creates the topics capture publishes to.
      await deployment.ingestion.start();
      await deployment.ingestion.waitReady();
      await deployment.capture.start();
      await deployment.capture.waitReady();
      return deployment;
    } catch (error) {
      await kafka?.destroy();
      await postgres.destroy();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Exits of capture or ingestion that the suite did not cause. */
  unexpectedExits(): string[] {
    return [...this.capture.unexpectedExits, ...this.ingestion.unexpectedExits];
  }

  /**
   * Waits until ingestion's group has committed everything the events topic holds: every event
   * capture acknowledged is then in Postgres and ClickHouse (offsets move only after both writes).
   */
  async drained(): Promise<void> {
    const kafka = createKafkaClient({ brokers: [this.kafka.brokers], clientId: 'fault-suite' });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      for (;;) {
        const ends = await admin.fetchTopicOffsets(EVENTS_TOPIC);
        const [committed] = await admin.fetchOffsets({ groupId: this.groupId, topics: [EVENTS_TOPIC] });
        const at = new Map(committed.partitions.map(({ partition, offset }) => [partition, BigInt(offset)]));
        const behind = ends.filter(
          ({ partition, high }) => BigInt(high) > 0n && (at.get(partition) ?? -1n) < BigInt(high),
        );
        if (behind.length === 0) return;
        if (Date.now() > deadline) {
          throw new Error(
            `ingestion did not commit the events topic's end within ${DRAIN_TIMEOUT_MS} ms: ` +
              `${JSON.stringify(behind)} vs ${JSON.stringify([...at])}\n${this.ingestion.output()}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * What the events table lists for the project. chDB lets one process at a time open its data
   * path, so ingestion is stopped (SIGTERM: it must exit 0) for the read and started again after.
   */
  async listedEvents(): Promise<ListedEvents> {
    const status = await this.ingestion.stop();
    if (status.code !== 0) throw new Error(`ingestion exited with ${JSON.stringify(status)} on SIGTERM`);
    try {
      const result = await runProcess(
        'node',
        [
          '-r',
          '@swc-node/register',
          'faults/harness/listed-events.process.ts',
          path.join(this.dataDir, 'clickhouse'),
          CLICKHOUSE_DATABASE,
          String(this.project.id),
        ],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}` },
          timeoutMs: READY_TIMEOUT_MS,
        },
      );
      if (result.code !== 0) throw new Error(`listing the events failed:\n${result.stderr}`);
      return JSON.parse(result.stdout) as ListedEvents;
    } finally {
      await this.ingestion.start();
      await this.ingestion.waitReady();
    }
  }

  /** Persons of the project and the distinct ids pointing at them. */
  async persons(): Promise<{ persons: number; distinctIds: number }> {
    const [row] = await this.postgres.superuser<{ persons: string; distinct_ids: string }>(
      `SELECT (SELECT count(*) FROM persons WHERE team_id = $1) AS persons,
              (SELECT count(*) FROM person_distinct_ids WHERE team_id = $1) AS distinct_ids`,
      [this.project.id],
    );
    return { persons: Number(row.persons), distinctIds: Number(row.distinct_ids) };
  }

  async destroy(): Promise<void> {
    await this.capture.destroy();
    await this.ingestion.destroy();
    await this.kafka.destroy();
    await this.postgres.destroy();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

export { isRunning };
