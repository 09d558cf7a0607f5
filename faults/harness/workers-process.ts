import { randomBytes } from 'node:crypto';
import { chmod, chown, stat } from 'node:fs/promises';
import path from 'node:path';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { Client } from 'pg';
import { createTestS3Client, eventually, freePort, REPO_ROOT, runProcess } from '@hogbase/test-support';
import { AppSlot, startFaultEngines, type FaultEngines } from './deployment';
import type { PostgresServer } from './postgres-server';

/** A customer's warehouse on the suite's server. */
const DESTINATION_DATABASE = 'batch_export_destination';
const COMMAND_TIMEOUT_MS = 120_000;

export interface RunRow {
  id: string;
  status: string;
  attempts: number;
  records_completed: number;
  records_total_count: number | null;
  cursor: string | null;
  latest_error: string | null;
}

/** S3Mock from tools/s3-server.mjs, as `npm test` starts it. */
export interface S3Server {
  endpoint: string;
  client: S3Client;
  createBucket(): Promise<string>;
}

interface S3ServerModule {
  startS3Server: (options: {
    port: number;
    log: (message: string) => void;
  }) => Promise<{ endpoint: string; stop(): Promise<void> }>;
}

/**
 * The batch-export side of a split deployment: its own PostgreSQL (TLS on: the Postgres destination
 * requires it), Kafka broker, chDB, and the management app and workers with one ENCRYPTION_KEYS.
 * chDB belongs to one process at a time: seeding, then the management app, then the workers.
 */
export class WorkersDeployment {
  readonly workers: AppSlot<'workers'>;
  readonly management: AppSlot<'management'>;
  readonly postgres: PostgresServer;
  private s3: { server: S3Server; stop(): Promise<void> } | undefined;

  private constructor(
    private readonly engines: FaultEngines,
    readonly project: { id: number; personalApiKey: string },
    ports: { workers: number; management: number },
    private readonly log: (message: string) => void,
  ) {
    this.postgres = engines.postgres;
    this.workers = new AppSlot('workers', `http://127.0.0.1:${ports.workers}`, {
      ...engines.env,
      WORKERS_PORT: String(ports.workers),
    });
    this.management = new AppSlot('management', `http://127.0.0.1:${ports.management}`, {
      ...engines.env,
      MANAGEMENT_PORT: String(ports.management),
    });
  }

  static async start(log: (message: string) => void): Promise<WorkersDeployment> {
    // Ingestion's Kafka without ingestion: with nothing captured, no run waits for it.
    const engines = await startFaultEngines(log, {
      ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
    });
    delete engines.env.S3_ENDPOINT;
    try {
      const migrate = await runProcess('npm', ['run', '--silent', 'admin', '--', 'migrate'], {
        cwd: REPO_ROOT,
        env: engines.env,
        timeoutMs: COMMAND_TIMEOUT_MS,
      });
      if (migrate.code !== 0) throw new Error(`admin migrate failed:\n${migrate.stdout}${migrate.stderr}`);
      const credentials = await engines.bootstrap('owner@faults.test');
      await enableTls(engines.postgres);
      await engines.postgres.superuser(`CREATE DATABASE ${DESTINATION_DATABASE} OWNER hogbase`);
      return new WorkersDeployment(
        engines,
        { id: credentials.project_id, personalApiKey: credentials.personal_api_key },
        { workers: await freePort(), management: await freePort() },
        log,
      );
    } catch (error) {
      await engines.destroy();
      throw error;
    }
  }

  /** Before any app opens chDB. Returns each hour's events as a run reads them, by hour start (ms). */
  async seedEvents(hours: readonly { start: Date; events: number }[]): Promise<Map<number, number>> {
    const counts = await this.engines.chDbProcess<Record<string, number>>(
      'faults/harness/seed-events.process.ts',
      this.project.id,
      hours.map((hour) => `${hour.start.getTime()}:${hour.events}`),
    );
    return new Map(Object.entries(counts).map(([start, count]) => [Number(start), count]));
  }

  /** Then stops the management app, which opened chDB. Returns the backfill's one run. */
  async createBackfilledExport(
    name: string,
    destination: { type: string; config: Record<string, unknown> },
    hourStart: Date,
  ): Promise<{ exportId: string; backfillId: string; runId: string }> {
    await this.management.start();
    try {
      const base = `${this.management.url}/api/projects/${this.project.id}/batch_exports`;
      const created = await this.api<{ id: string }>(`${base}/`, { name, destination, interval: 'hour' });
      const { backfill_id: backfillId } = await this.api<{ backfill_id: string }>(
        `${base}/${created.id}/backfills/`,
        {
          start_at: hourStart.toISOString(),
          end_at: new Date(hourStart.getTime() + 3_600_000).toISOString(),
        },
      );
      const runs = await this.postgres.superuser<{ id: string }>(
        'SELECT id FROM batch_export_runs WHERE backfill_id = $1',
        [backfillId],
      );
      if (runs.length !== 1) throw new Error(`the backfill of one hour has ${runs.length} runs`);
      return { exportId: created.id, backfillId, runId: runs[0].id };
    } finally {
      const status = await this.management.stop();
      if (status.code !== 0) throw new Error(`management exited with ${JSON.stringify(status)} on SIGTERM`);
    }
  }

  async run(runId: string): Promise<RunRow> {
    const [row] = await this.postgres.superuser<RunRow>(
      `SELECT id, status, attempts, records_completed, records_total_count, cursor, latest_error
         FROM batch_export_runs WHERE id = $1`,
      [runId],
    );
    if (!row) throw new Error(`no run ${runId}`);
    return row;
  }

  async backfillStatus(backfillId: string): Promise<string | undefined> {
    const [row] = await this.postgres.superuser<{ status: string }>(
      'SELECT status FROM batch_export_backfills WHERE id = $1',
      [backfillId],
    );
    return row?.status;
  }

  /** TLS to the suite's server, self-signed. */
  postgresDestination(tableName: string): Record<string, unknown> {
    const url = new URL(this.postgres.appUrl);
    return {
      host: '127.0.0.1',
      port: this.postgres.port,
      database: DESTINATION_DATABASE,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      table_name: tableName,
      has_self_signed_cert: true,
    };
  }

  async destination<T>(read: (client: Client) => Promise<T>): Promise<T> {
    const url = new URL(this.postgres.appUrl);
    url.pathname = `/${DESTINATION_DATABASE}`;
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await read(client);
    } finally {
      await client.end();
    }
  }

  /** Started on first use: the fault suite runs without `npm test`'s servers. */
  async s3Server(): Promise<S3Server> {
    if (this.s3) return this.s3.server;
    const modulePath = path.join(REPO_ROOT, 'tools', 's3-server.mjs');
    const { startS3Server } = (await import(modulePath)) as S3ServerModule;
    const started = await startS3Server({ port: 0, log: (message) => this.log(`[s3] ${message}`) });
    const client = createTestS3Client(started.endpoint);
    const server: S3Server = {
      endpoint: started.endpoint,
      client,
      createBucket: async () => {
        const bucket = `faults-${randomBytes(4).toString('hex')}`;
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        return bucket;
      },
    };
    this.s3 = {
      server,
      stop: async () => {
        client.destroy();
        await started.stop();
      },
    };
    return server;
  }

  unexpectedExits(): string[] {
    return [...this.workers.unexpectedExits, ...this.management.unexpectedExits];
  }

  async destroy(): Promise<void> {
    await this.workers.destroy();
    await this.management.destroy();
    await this.s3?.stop();
    await this.engines.destroy();
  }

  private async api<T>(url: string, body: unknown): Promise<T> {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${this.project.personalApiKey}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  }
}

/** The Postgres destination connects with TLS only, as PostHog's does (sslmode=require). */
async function enableTls(postgres: PostgresServer): Promise<void> {
  const [{ data_directory: dataDirectory }] = await postgres.superuser<{ data_directory: string }>(
    'SHOW data_directory',
  );
  const certificate = path.join(dataDirectory, 'server.crt');
  const key = path.join(dataDirectory, 'server.key');
  const made = await runProcess(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      key,
      '-out',
      certificate,
    ],
    { cwd: '/', env: process.env, timeoutMs: COMMAND_TIMEOUT_MS },
  );
  if (made.code !== 0) throw new Error(`openssl could not make a certificate:\n${made.stderr}`);
  // The server's OS user must own its key, mode 0600.
  const owner = await stat(dataDirectory);
  for (const file of [certificate, key]) await chown(file, owner.uid, owner.gid);
  await chmod(key, 0o600);
  await postgres.superuser('ALTER SYSTEM SET ssl = on');
  await postgres.superuser('SELECT pg_reload_conf()');
  let refused: Error | undefined;
  await eventually(
    'the Postgres server of the suite to turn TLS on',
    async () => {
      const client = new Client({ connectionString: postgres.appUrl, ssl: { rejectUnauthorized: false } });
      try {
        await client.connect();
        const { rows } = await client.query<{ ssl: boolean }>(
          'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
        );
        return rows[0]?.ssl === true;
      } catch (error) {
        refused = error as Error; // Not yet: the server may still be reloading its configuration.
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    { timeoutMs: 30_000, intervalMs: 250, context: () => refused?.message ?? '' },
  );
}
