import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { findRunningEmbeddedPostgres } from '@hogbase/postgres';
import { BIN_DIR, freePort, REPO_ROOT, runProcess, startApp, type AppProcess } from '@hogbase/test-support';
import { AppSlot } from './deployment';
import { LedgerSender, type SenderReport } from './ledger-sender';
import { report } from './scenario';
import type { ListedEvents } from './split-deployment';

const CLICKHOUSE_DATABASE = 'hogbase';

interface InitialCredentials {
  personal_api_key: string;
  project_id: number;
  project_api_key: string;
}
const COMMAND_TIMEOUT_MS = 120_000;
/** Half the split default: one process runs everything, and crash recovery meets the piled-up requests. */
const EVENTS_PER_SECOND = Number(process.env.FAULTS_EVENTS_PER_SECOND ?? 500);
/** npm start's restart after kill -9 (PGlite's recovery) on a loaded machine. */
const READY_TIMEOUT_MS = 180_000;

function standaloneEnv(dataDir: string, ports: { management: number; capture: number }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
    DATA_DIR: dataDir,
    MANAGEMENT_PORT: String(ports.management),
    CAPTURE_PORT: String(ports.capture),
    CLICKHOUSE_DATABASE,
  };
  for (const name of [
    'DATABASE_URL',
    'KAFKA_BROKERS',
    'CLICKHOUSE_URL',
    'CLICKHOUSE_DATA_PATH',
    'NODE_OPTIONS',
  ]) {
    delete env[name];
  }
  return env;
}

/** On fixed ports; readiness is the management port's `/_ready`, which covers the whole process. */
export class StandaloneDeployment {
  readonly server: AppSlot<'standalone'>;
  readonly captureUrl: string;
  project: { id: number; apiKey: string } = { id: 0, apiKey: '' };

  private constructor(
    readonly dataDir: string,
    private readonly env: NodeJS.ProcessEnv,
    ports: { management: number; capture: number },
    private readonly ownsDataDir: boolean,
  ) {
    this.server = new AppSlot(
      'standalone',
      `http://127.0.0.1:${ports.management}`,
      env,
      'ready',
      READY_TIMEOUT_MS,
    );
    this.captureUrl = `http://127.0.0.1:${ports.capture}`;
  }

  /** A new temporary DATA_DIR when absent. */
  static async start(dataDir?: string): Promise<StandaloneDeployment> {
    const ownsDataDir = !dataDir;
    const dir = dataDir ?? (await mkdtemp(path.join(tmpdir(), 'hogbase-faults-standalone-')));
    const ports = { management: await freePort(), capture: await freePort() };
    const deployment = new StandaloneDeployment(dir, standaloneEnv(dir, ports), ports, ownsDataDir);
    try {
      await deployment.server.start();
      const credentials = await deployment.initialCredentials();
      deployment.project = { id: credentials.project_id, apiKey: credentials.project_api_key };
      return deployment;
    } catch (error) {
      await deployment.destroy();
      throw error;
    }
  }

  async startIntruder(): Promise<AppProcess> {
    return startApp('standalone', {
      ...this.env,
      MANAGEMENT_PORT: String(await freePort()),
      CAPTURE_PORT: String(await freePort()),
    });
  }

  /** 0: no answer. A management call that reads Postgres. */
  async managementStatus(): Promise<number> {
    try {
      const { personal_api_key: key } = await this.initialCredentials();
      const response = await fetch(`${this.server.url}/api/organizations/`, {
        headers: { Authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(5_000),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }

  private async initialCredentials(): Promise<InitialCredentials> {
    return JSON.parse(
      await readFile(path.join(this.dataDir, 'initial-credentials.json'), 'utf8'),
    ) as InitialCredentials;
  }

  sender(label: string): LedgerSender {
    return new LedgerSender({
      captureUrl: this.captureUrl,
      apiKey: this.project.apiKey,
      eventsPerSecond: EVENTS_PER_SECOND,
      label,
    });
  }

  /** chDB lets one process open its data path: the server is stopped (it must exit 0) for the read. */
  async listedEvents(): Promise<ListedEvents> {
    const status = await this.server.stop();
    if (status.code !== 0) throw new Error(`npm start exited with ${JSON.stringify(status)} on SIGTERM`);
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
        { cwd: REPO_ROOT, env: this.env, timeoutMs: COMMAND_TIMEOUT_MS },
      );
      if (result.code !== 0) throw new Error(`listed-events failed:\n${result.stderr}`);
      return JSON.parse(result.stdout) as ListedEvents;
    } finally {
      await this.server.start();
    }
  }

  async persons(): Promise<{ persons: number; distinctIds: number }> {
    const client = new Client({ connectionString: await findRunningEmbeddedPostgres(this.dataDir) });
    await client.connect();
    try {
      const { rows } = await client.query<{ persons: string; distinct_ids: string }>(
        `SELECT (SELECT count(*) FROM persons WHERE team_id = $1) AS persons,
                (SELECT count(*) FROM person_distinct_ids WHERE team_id = $1) AS distinct_ids`,
        [this.project.id],
      );
      return { persons: Number(rows[0].persons), distinctIds: Number(rows[0].distinct_ids) };
    } finally {
      await client.end();
    }
  }

  async destroy(): Promise<void> {
    await this.server.destroy();
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * Every event acknowledged, each listed exactly once and nothing else, one person per distinct id,
 * no unasked exit, ready again. On the in-process bus a 200 means stored: nothing to drain first.
 */
export async function expectEveryAcknowledgedEventListedOnce(
  deployment: StandaloneDeployment,
  label: string,
  sent: SenderReport & { ledger: ReadonlySet<string> },
): Promise<void> {
  const listed = await deployment.listedEvents();
  const counts = new Map<string, number>();
  for (const uuid of listed.uuids) counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
  const missing = [...sent.ledger].filter((uuid) => !counts.has(uuid));
  const repeated = [...counts].filter(([, count]) => count > 1).map(([uuid]) => uuid);
  const neverAcknowledged = [...counts.keys()].filter((uuid) => !sent.ledger.has(uuid));
  report(
    `${label}: sent ${sent.sent} / acknowledged ${sent.acknowledged} / listed ${listed.uuids.length} ` +
      `(${listed.rawRows} rows before merges) / lost ${missing.length} / duplicated ${repeated.length}; ` +
      `${sent.failedAttempts} failed attempts, retried: ${JSON.stringify(sent.failures)}`,
  );
  expect({
    missing: missing.slice(0, 5),
    missingCount: missing.length,
    repeated: repeated.slice(0, 5),
    neverAcknowledged: neverAcknowledged.slice(0, 5),
  }).toEqual({ missing: [], missingCount: 0, repeated: [], neverAcknowledged: [] });
  expect(listed.uuids).toHaveLength(sent.ledger.size);
  expect(await deployment.persons()).toEqual({
    persons: sent.distinctIds.length,
    distinctIds: sent.distinctIds.length,
  });
  expect(deployment.server.unexpectedExits).toEqual([]);
  expect(await deployment.server.readiness()).toBe(200);
}
