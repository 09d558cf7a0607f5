import { randomBytes } from 'node:crypto';
import { chmod, chown, stat } from 'node:fs/promises';
import path from 'node:path';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { Client } from 'pg';
import { createTestS3Client, eventually, freePort, REPO_ROOT, runProcess } from '@hogbase/test-support';
import { AppSlot, startFaultEngines, type FaultEngines } from './deployment';
import type { PostgresServer } from './postgres-server';

/** The database on the suite's server that the Postgres destination writes to (a customer's warehouse). */
const DESTINATION_DATABASE = 'batch_export_destination';
const COMMAND_TIMEOUT_MS = 120_000;

/** A batch-export run as the workers leave it in Postgres. */
export interface RunRow {
  id: string;
  status: string;
  attempts: number;
  records_completed: number;
  records_total_count: number | null;
  cursor: string | null;
  latest_error: string | null;
}

/** What the S3 destination of a scenario needs: S3Mock from tools/s3-server.mjs, as `npm test` starts it. */
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
 * The batch-export side of a split deployment on engines the suite controls: its own PostgreSQL
 * server (TLS on, since the Postgres destination connects with TLS only), its own Kafka broker
 * (ingestion's, which the workers consult), chDB under a temporary data folder, and the management
 * app (which creates exports and backfills) and the workers, each as `apps/<app>/src/main.ts` with
 * the same ENCRYPTION_KEYS. chDB belongs to one process at a time: events are seeded, the
 * management app creates the backfill, then the workers run it, in turn.
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
    // Ingestion's Kafka, no ingestion: the workers alone ask its consumer group how far it got,
    // and with no event captured there is nothing for a run to wait for.
    const engines = await startFaultEngines(log, {
      // What a platform team shares between the management app and the workers (a Secret).
      ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
    });
    // The destinations' S3 is the suite's own S3Mock (s3Server), never `npm test`'s.
    delete engines.env.S3_ENDPOINT;
    try {
      // As an operator deploys: Postgres, ClickHouse (chDB under DATA_DIR) and the Kafka topics.
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

  /**
   * Writes each hour's events (seed-events.process.ts), before any app opens chDB. Returns the
   * events each hour holds as a run reads it, by hour start (ms).
   */
  async seedEvents(hours: readonly { start: Date; events: number }[]): Promise<Map<number, number>> {
    const counts = await this.engines.chDbProcess<Record<string, number>>(
      'faults/harness/seed-events.process.ts',
      this.project.id,
      hours.map((hour) => `${hour.start.getTime()}:${hour.events}`),
    );
    return new Map(Object.entries(counts).map(([start, count]) => [Number(start), count]));
  }

  /**
   * Creates an hourly export and a backfill of one hour through the management API, as a user
   * does, then stops the management app (it opened chDB to find the project's first event).
   * Returns the backfill's one run.
   */
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

  /** The backfill's status, as the API shows it. */
  async backfillStatus(backfillId: string): Promise<string | undefined> {
    const [row] = await this.postgres.superuser<{ status: string }>(
      'SELECT status FROM batch_export_backfills WHERE id = $1',
      [backfillId],
    );
    return row?.status;
  }

  /** The Postgres destination's config (a TLS connection to the suite's server, self-signed). */
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

  /** Runs `read` on a connection to the destination database. */
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

  /** S3Mock, started on first use (the fault suite runs without `npm test`'s servers). */
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

  /** Exits of the apps that the suite did not cause. */
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

/**
 * Turns TLS on in the suite's server with a self-signed certificate: the Postgres destination
 * connects with TLS only, as PostHog's does (sslmode=require). SSL settings take a reload.
 */
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
  // The server (the OS user `postgres` when the suite runs as root) must own its key, mode 0600.
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
