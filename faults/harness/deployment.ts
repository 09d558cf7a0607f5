import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  runProcess,
  splitModeEnv,
  startApp,
  stopApp,
  waitForApp,
  type AppProcess,
  type ExitStatus,
} from '@hogbase/test-support';
import { startKafkaServer, type KafkaServer } from './kafka-server';
import { startPostgresServer, type PostgresServer } from './postgres-server';

const CLICKHOUSE_DATABASE = 'hogbase';
const COMMAND_TIMEOUT_MS = 120_000;

/** One app of a deployment, on a fixed port so a restarted one is where its clients expect it. */
export class AppSlot<Name extends string = string> {
  app: AppProcess | undefined;
  /** Exits the suite did not cause: what the fault suite exists to rule out. */
  readonly unexpectedExits: string[] = [];
  private readonly outputs: string[] = [];

  /** `ready` waits for `/_ready`; `listening` for any answer of `/_health` (an app with a dependency down answers). */
  constructor(
    readonly name: Name,
    readonly url: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly startedWhen: 'ready' | 'listening' = 'ready',
    /** npm start's crash recovery under load takes longer. */
    private readonly readyTimeoutMs = READY_TIMEOUT_MS,
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
    if (this.startedWhen === 'ready') {
      await this.waitReady();
      return;
    }
    await waitForApp(app, 'its probe server', async () => {
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
    await waitForApp(
      this.app,
      '/_ready answering 200',
      async () => {
        try {
          return (await fetch(`${this.url}/_ready`, { signal: AbortSignal.timeout(5_000) })).status === 200;
        } catch {
          return false; // Not listening yet, or too busy to answer in time.
        }
      },
      this.readyTimeoutMs,
    );
  }

  /** As Kubernetes stops a pod; fails (after a SIGKILL) past the 20 s bound. */
  async stop(): Promise<ExitStatus> {
    const app = this.app;
    if (!app) throw new Error(`${this.name} is not running`);
    this.app = undefined;
    return stopApp(app);
  }

  /** No drain, no goodbye to the consumer group or the job engine. */
  async kill(): Promise<void> {
    const app = this.app;
    if (!app) throw new Error(`${this.name} is not running`);
    this.app = undefined;
    await killApps(app);
  }

  /** 0: no answer. */
  async readiness(): Promise<number> {
    try {
      return (await fetch(`${this.url}/_ready`, { signal: AbortSignal.timeout(5_000) })).status;
    } catch {
      return 0;
    }
  }

  output(): string {
    return [...this.outputs, this.app?.output() ?? ''].join('\n');
  }

  /** Warn and above (pino JSON), by message: what an operator reads during an outage. */
  warnings(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const line of this.output().split('\n')) {
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

/** Its own PostgreSQL server and Kafka broker, chDB under a temporary folder, and the apps' environment. */
export interface FaultEngines {
  postgres: PostgresServer;
  kafka: KafkaServer;
  dataDir: string;
  groupId: string;
  env: NodeJS.ProcessEnv;
  /** As an operator makes them. */
  bootstrap(email: string): Promise<BootstrapCredentials>;
  /** Runs chdb-process.ts `script` on the deployment's chDB; only while no app has chDB open. */
  chDbProcess<T>(script: string, teamId: number, args?: string[]): Promise<T>;
  destroy(): Promise<void>;
}

export interface BootstrapCredentials {
  project_id: number;
  project_api_key: string;
  personal_api_key: string;
}

/** Nothing is left behind if it fails. */
export async function startFaultEngines(
  log: (message: string) => void,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<FaultEngines> {
  const postgres = await startPostgresServer();
  let kafka: KafkaServer | undefined;
  let dataDir: string | undefined;
  try {
    kafka = await startKafkaServer(log);
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-faults-'));
    const groupId = `faults-${randomBytes(4).toString('hex')}`;
    const env: NodeJS.ProcessEnv = {
      ...splitModeEnv({
        databaseUrl: postgres.appUrl,
        brokers: [kafka.brokers],
        consumerGroup: groupId,
        dataDir,
      }),
      CLICKHOUSE_DATABASE,
      ...extraEnv,
    };
    const [startedKafka, startedDataDir] = [kafka, dataDir];
    return {
      postgres,
      kafka,
      dataDir,
      groupId,
      env,
      async bootstrap(email) {
        const bootstrap = await runProcess(
          'npm',
          ['run', '--silent', 'admin', '--', 'bootstrap', '--email', email],
          { cwd: REPO_ROOT, env, timeoutMs: COMMAND_TIMEOUT_MS },
        );
        if (bootstrap.code !== 0) {
          throw new Error(`admin bootstrap failed:\n${bootstrap.stdout}${bootstrap.stderr}`);
        }
        return JSON.parse(bootstrap.stdout) as BootstrapCredentials;
      },
      async chDbProcess<T>(script: string, teamId: number, args: string[] = []) {
        const chDbPath = path.join(startedDataDir, 'clickhouse');
        const result = await runProcess(
          'node',
          ['-r', '@swc-node/register', script, chDbPath, CLICKHOUSE_DATABASE, String(teamId), ...args],
          { cwd: REPO_ROOT, env, timeoutMs: COMMAND_TIMEOUT_MS },
        );
        if (result.code !== 0) throw new Error(`${script} failed:\n${result.stderr}`);
        return JSON.parse(result.stdout) as T;
      },
      async destroy() {
        await startedKafka.destroy();
        await postgres.destroy();
        await rm(startedDataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await kafka?.destroy();
    await postgres.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
