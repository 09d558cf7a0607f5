import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Pool } from 'pg';
import { SecretBox } from '@hogbase/config';
import { createTestS3Client } from '@hogbase/test-support';
import type { BenchConfig, ExportFormat } from './bench.config';
import type { BenchDatabase } from './bench-database.util';
import type { ExportStepRequest, ExportStepResult } from './export-run.process';
import { printRoundsTable, summaryLine, type BenchSummary, type Metric } from './report.util';

const HOUR_MS = 3_600_000;
const MIB = 1024 * 1024;
const EXPORTS_DATABASE = 'hogbase_bench_exports';
const BUCKET = 'hogbase-bench-exports';
const STOP_TIMEOUT_MS = 15_000;

const DESTINATION_FORMATS: Record<ExportFormat, { label: string; config: Record<string, unknown> }> = {
  JSONLines: { label: 'S3 JSONLines gzip', config: { file_format: 'JSONLines', compression: 'gzip' } },
  Parquet: { label: 'S3 Parquet zstd', config: { file_format: 'Parquet', compression: 'zstd' } },
};

type PathName = 'select' | ExportFormat;

type Measured = Extract<ExportStepResult, { type: 'measured' }>;

/** Steps one at a time, each a fresh process on the same chDB directory; `close` stops a running one and removes it. */
export class ExportSteps {
  private child: ChildProcess | undefined;

  private constructor(
    readonly dataPath: string,
    /** The steps get it as ENCRYPTION_KEYS. */
    readonly encryptionKey: Buffer,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async open(databaseUrl: string): Promise<ExportSteps> {
    const encryptionKey = randomBytes(32);
    const dataPath = await mkdtemp(path.join(tmpdir(), 'hogbase-bench-exports-'));
    // The embedded chDB, whatever the caller's CLICKHOUSE_URL says.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      CLICKHOUSE_DATABASE: EXPORTS_DATABASE,
      CLICKHOUSE_DATA_PATH: dataPath,
      ENCRYPTION_KEYS: encryptionKey.toString('base64'),
      LOG_LEVEL: 'warn',
      EGRESS_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
    };
    delete env.CLICKHOUSE_URL;
    delete env.CLICKHOUSE_CLUSTER;
    return new ExportSteps(dataPath, encryptionKey, env);
  }

  run(request: ExportStepRequest): Promise<ExportStepResult> {
    const child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', path.join(__dirname, 'export-run.process.ts')],
      {
        cwd: path.resolve(__dirname, '..'),
        env: { ...this.env, BENCH_EXPORT_REQUEST: JSON.stringify(request) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    this.child = child;
    return new Promise<ExportStepResult>((resolve, reject) => {
      let result: ExportStepResult | undefined;
      child.once('message', (message: ExportStepResult) => (result = message));
      child.once('error', reject);
      // Resolved on exit: the next step may open chDB only once this process has let go of it.
      child.once('exit', (code, signal) => {
        if (this.child === child) this.child = undefined;
        if (result && code === 0) resolve(result);
        else
          reject(
            new Error(`the ${request.step} step exited (code ${code}, signal ${signal}) without a result`),
          );
      });
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    await rm(this.dataPath, { recursive: true, force: true });
  }
}

export interface ExportsBenchServices {
  database: BenchDatabase;
  s3Endpoint: string;
  steps: ExportSteps;
}

async function ensureBucket(s3: S3Client): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  } catch (error) {
    const owned = error instanceof S3ServiceException && error.name === 'BucketAlreadyOwnedByYou';
    if (!owned) throw error;
  }
}

async function listObjects(s3: S3Client, prefix: string): Promise<{ key: string; size: number }[]> {
  const objects: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) objects.push({ key: object.Key ?? '', size: object.Size ?? 0 });
    token = page.NextContinuationToken;
  } while (token);
  return objects;
}

async function countGzipLines(s3: S3Client, key: string): Promise<number> {
  const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  let lines = 0;
  for await (const chunk of (object.Body as Readable).pipe(createGunzip()) as AsyncIterable<Buffer>) {
    for (let index = chunk.indexOf(0x0a); index !== -1; index = chunk.indexOf(0x0a, index + 1)) lines += 1;
  }
  return lines;
}

/** A new export per path and round: the scheduled-run index allows one run per export and interval. */
async function createRun(
  pool: Pool,
  secrets: SecretBox,
  teamId: number,
  hour: { start: Date; end: Date },
  destination: Record<string, unknown>,
): Promise<string> {
  const exportId = randomUUID();
  const runId = randomUUID();
  await pool.query(
    `INSERT INTO batch_exports (id, team_id, name, destination_type, destination_config, interval)
     VALUES ($1, $2, $3, 'S3', $4, 'hour')`,
    [exportId, teamId, `bench ${String(destination.prefix)}`, secrets.seal(JSON.stringify(destination))],
  );
  await pool.query(
    `INSERT INTO batch_export_runs (id, batch_export_id, status, data_interval_start, data_interval_end)
     VALUES ($1, $2, 'Starting', $3, $4)`,
    [runId, exportId, hour.start, hour.end],
  );
  return runId;
}

/** 7. The workers' `executeRun` of one hour to S3, beside one `SELECT … FORMAT JSONEachRow` into /dev/null. */
export async function runExportsBench(
  config: BenchConfig,
  services: ExportsBenchServices,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const { database, steps } = services;
  const project = await database.createProject('exports');
  const hourStart = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS);
  const hour = { start: hourStart, end: new Date(hourStart.getTime() + HOUR_MS) };
  const loaded = await steps.run({
    step: 'load',
    teamId: project.id,
    events: config.exportEvents,
    hourStart: hour.start.toISOString(),
  });
  if (loaded.type !== 'loaded' || loaded.rows !== config.exportEvents) {
    throw new Error(`loaded ${JSON.stringify(loaded)}, expected ${config.exportEvents} rows`);
  }
  log(
    `exports: ${loaded.rows.toLocaleString('en-US')} events in ${hour.start.toISOString()} ` +
      `(${loaded.seconds.toFixed(0)} s to insert)`,
  );

  const s3 = createTestS3Client(services.s3Endpoint);
  const pool = new Pool({ connectionString: database.url, max: 2 });
  const secrets = new SecretBox([steps.encryptionKey]);
  const paths: PathName[] = ['select', ...config.exportFormats];
  const results = new Map<PathName, Measured[]>(paths.map((name) => [name, []]));
  try {
    await ensureBucket(s3);
    for (let round = 0; round < config.rounds; round += 1) {
      // Rotating order, so drift on a shared machine hits every path alike.
      const order = [...paths.slice(round % paths.length), ...paths.slice(0, round % paths.length)];
      for (const name of order) {
        const measured =
          name === 'select'
            ? await steps.run({
                step: 'select',
                teamId: project.id,
                hourStart: hour.start.toISOString(),
                hourEnd: hour.end.toISOString(),
              })
            : await exportRound(name, round);
        if (measured.type !== 'measured') throw new Error(`unexpected step result ${measured.type}`);
        if (measured.rows !== loaded.rows) {
          throw new Error(`${name} wrote ${measured.rows} rows of ${loaded.rows}`);
        }
        results.get(name)!.push(measured);
        log(
          `exports round ${round + 1} ${name}: ${Math.round(measured.rows / measured.seconds).toLocaleString('en-US')} rows/s, ` +
            `${(measured.bytes / MIB).toFixed(1)} MiB, peak RSS ${(measured.peakRssBytes / MIB).toFixed(0)} MiB`,
        );
      }
    }
  } finally {
    s3.destroy();
    await pool.end();
  }

  /** Then checks what S3 holds and removes it. */
  async function exportRound(format: ExportFormat, round: number): Promise<ExportStepResult> {
    const prefix = `round-${round + 1}/${format.toLowerCase()}/{table}`;
    const runId = await createRun(pool, secrets, project.id, hour, {
      bucket_name: BUCKET,
      region: 'us-east-1',
      endpoint_url: services.s3Endpoint,
      aws_access_key_id: 'hogbase-bench',
      aws_secret_access_key: 'hogbase-bench',
      prefix,
      ...DESTINATION_FORMATS[format].config,
    });
    const result = await steps.run({ step: 'export', runId });
    if (result.type !== 'measured') return result;
    const objects = await listObjects(s3, `round-${round + 1}/`);
    const stored = objects.reduce((sum, object) => sum + object.size, 0);
    if (objects.length === 0 || stored !== result.bytes) {
      throw new Error(
        `S3 holds ${objects.length} objects of ${stored} bytes; the run reported ${result.bytes}`,
      );
    }
    if (format === 'JSONLines') {
      let lines = 0;
      for (const object of objects) lines += await countGzipLines(s3, object.key);
      if (lines !== result.rows)
        throw new Error(`the JSONLines objects hold ${lines} lines of ${result.rows}`);
    }
    await s3.send(
      new DeleteObjectsCommand({
        Bucket: BUCKET,
        Delete: { Objects: objects.map((object) => ({ Key: object.key })) },
      }),
    );
    return result;
  }

  const of = (name: PathName) => results.get(name)!;
  const rate = (name: PathName) => of(name).map((result) => result.rows / result.seconds);
  const baseline = rate('select');
  const mebibytes = (values: number[]) => values.map((value) => value / MIB);
  /** Peak RSS, and how far above the starting RSS: what the path itself held. */
  const memory = (name: PathName, key: string, label: string): Metric[] => [
    {
      key: `${key}_peak_rss_mib`,
      label: `${label}: peak RSS, MiB`,
      rounds: mebibytes(of(name).map((r) => r.peakRssBytes)),
    },
    {
      key: `${key}_rss_growth_mib`,
      label: `${label}: peak RSS above the start, MiB`,
      rounds: mebibytes(of(name).map((r) => r.peakRssBytes - r.rssBeforeBytes)),
    },
  ];
  const metrics: Metric[] = [
    {
      key: 'rss_before_mib',
      label: 'RSS at the start of a path (engines open), MiB',
      rounds: mebibytes(of('select').map((r) => r.rssBeforeBytes)),
    },
    {
      key: 'select_rows_per_s',
      label: 'baseline: SELECT … FORMAT JSONEachRow → /dev/null, rows/s',
      rounds: baseline,
    },
    {
      key: 'select_mib',
      label: 'baseline: JSON written, MiB',
      rounds: mebibytes(of('select').map((r) => r.bytes)),
      digits: 1,
    },
    ...memory('select', 'select', 'baseline'),
    ...config.exportFormats.flatMap((format): Metric[] => {
      const key = format.toLowerCase();
      const label = DESTINATION_FORMATS[format].label;
      const rows = rate(format);
      return [
        { key: `${key}_rows_per_s`, label: `${label}: executeRun, rows/s`, rounds: rows },
        {
          key: `${key}_ratio`,
          label: `${label} / baseline`,
          rounds: rows.map((value, index) => value / baseline[index]),
          digits: 2,
        },
        {
          key: `${key}_mib`,
          label: `${label}: bytes in S3, MiB`,
          rounds: mebibytes(of(format).map((r) => r.bytes)),
          digits: 1,
        },
        ...memory(format, key, label),
      ];
    }),
  ];
  printRoundsTable(
    `Exports: ${loaded.rows.toLocaleString('en-US')} events of one hour, chDB → S3 (S3Mock) vs SELECT → /dev/null`,
    metrics,
  );
  return summaryLine('exports', { events: loaded.rows, formats: config.exportFormats }, metrics);
}
