import type { Pool } from 'pg';
import { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DestinationFactory } from '@hogbase/batch-exports';
import type { ClickHouseClient } from '@hogbase/clickhouse';
import type { SecretBox, WorkersConfig } from '@hogbase/config';
import { sleep, type EventPublisher, type IngestionProgress } from '@hogbase/queue';
import { checkReadiness, type RunningService } from '@hogbase/service-runtime';
import { ImportApps } from './import-apps/import-apps.service';
import { executeRun } from './run-executor.handler';
import { RunStore } from './run.store';
import { markEnqueued, runsToEnqueue, scheduleDueRuns } from './scheduler.util';

/** One job per run, its id the run's id. */
export const RUN_QUEUE = 'batch-export-run';
/** The process must exit within 20 s of SIGTERM, after the other services stopped too. */
const STOP_GRACE_MS = 8_000;
const RETRY_LIMIT = 5;
/** A run that waited this long for ingestion says so in its logs. */
const LONG_WAIT_MS = 60_000;

/** What the workers run on; the caller opened them and closes them after `stop()`. */
export interface WorkersEngines {
  pool: Pool;
  /** For the job engine, which opens a small pool of its own. */
  databaseUrl: string;
  clickhouse: ClickHouseClient;
  ingestion: IngestionProgress;
  secrets: SecretBox;
  destinations: Readonly<Record<string, DestinationFactory>>;
  /** Where import apps' `posthog.capture` goes; without it the workers run no import apps. */
  publisher?: EventPublisher;
  logger: Logger;
}

export interface WorkersServiceOptions {
  tickMs?: number;
  /** Keep small on the embedded Postgres. */
  jobEngineConnections?: number;
  ingestionPollMs?: number;
  /** runEveryMinute's period. Default APPS_SCHEDULE_TICK_SECONDS. */
  appsTickMs?: number;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Returns at once; pg-boss starts in the background, retried while Postgres is down. */
export function startWorkersService(
  config: WorkersConfig,
  engines: WorkersEngines,
  options: WorkersServiceOptions = {},
): Promise<RunningService> {
  const { pool, logger } = engines;
  const tickMs = options.tickMs ?? 10_000;
  const ingestionPollMs = options.ingestionPollMs ?? 5_000;
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics, prefix: 'workers_' });
  const runsTotal = new Counter({
    name: 'batch_export_runs_total',
    help: 'Batch-export runs ended, by status',
    labelNames: ['status'],
    registers: [metrics],
  });
  const rowsTotal = new Counter({
    name: 'batch_export_rows_exported_total',
    help: 'Rows exported',
    registers: [metrics],
  });
  const bytesTotal = new Counter({
    name: 'batch_export_bytes_exported_total',
    help: 'Bytes exported',
    registers: [metrics],
  });
  const waiting = new Gauge({
    name: 'batch_export_runs_waiting_for_ingestion',
    help: 'Runs whose interval ended but which wait for ingestion to process it',
    registers: [metrics],
  });
  const duration = new Histogram({
    name: 'batch_export_run_duration_seconds',
    help: 'Duration of completed runs',
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [metrics],
  });

  const store = new RunStore(pool);
  const boss = new PgBoss({
    connectionString: engines.databaseUrl,
    max: options.jobEngineConnections ?? 3,
    schema: 'pgboss',
    application_name: 'workers',
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
  });
  const importApps = engines.publisher
    ? new ImportApps({
        pool,
        config: config.apps,
        publisher: engines.publisher,
        logger: logger.child({ component: 'import-apps' }),
        registry: metrics,
        tickMs: options.appsTickMs ?? config.appsScheduleTickSeconds * 1_000,
        concurrency: config.concurrency,
      })
    : undefined;
  let bossError: string | undefined;
  boss.on('error', (error) => {
    if (bossError !== messageOf(error)) logger.warn({ err: error }, 'job engine error; it retries');
    bossError = messageOf(error);
  });

  const stopSignal = new AbortController();

  /** An ingestion outage delays runs instead of emptying them. */
  const waitForIngestion = async (runId: string, jobSignal: AbortSignal) => {
    const run = await store.locate(runId);
    if (!run) return; // gone: executeRun skips it
    const until = new Date(run.dataIntervalEnd.getTime() + config.exportLagSeconds * 1_000);
    const since = Date.now();
    let told = false;
    for (;;) {
      jobSignal.throwIfAborted();
      stopSignal.signal.throwIfAborted();
      const answer = await engines.ingestion
        .processedUntil(until)
        .catch((error: unknown) => `ingestion's progress is unknown: ${messageOf(error)}`);
      if (answer === true) return;
      if (!told && Date.now() - since >= LONG_WAIT_MS) {
        told = true;
        await store.log(run.batchExportId, runId, 'info', `Waiting for ingestion: ${answer}`);
        logger.info({ runId, reason: answer }, 'batch export run waits for ingestion');
      }
      await sleep(ingestionPollMs, AbortSignal.any([jobSignal, stopSignal.signal]));
    }
  };
  let started = false;
  let lastTickError: string | undefined;

  const tick = async () => {
    await scheduleDueRuns(pool, new Date());
    const pending = await runsToEnqueue(pool);
    const lagMs = config.exportLagSeconds * 1_000;
    for (const run of pending) {
      await boss.send(
        RUN_QUEUE,
        { runId: run.id },
        {
          id: run.id,
          startAfter: new Date(Math.max(Date.now(), run.dataIntervalEnd.getTime() + lagMs)),
        },
      );
    }
    await markEnqueued(
      pool,
      pending.map((run) => run.id),
    );
  };

  const loop = (async () => {
    for (let attempt = 1; !stopSignal.signal.aborted; attempt++) {
      try {
        await boss.start();
        await boss.createQueue(RUN_QUEUE, {
          retryLimit: RETRY_LIMIT,
          retryDelay: 30,
          retryBackoff: true,
          retryDelayMax: 3_600,
          heartbeatSeconds: 30,
          expireInSeconds: 4 * 3_600,
          deleteAfterSeconds: 7 * 86_400,
        });
        await boss.work<{ runId: string }>(
          RUN_QUEUE,
          { localConcurrency: config.concurrency, pollingIntervalSeconds: 2 },
          async ([job]) => {
            waiting.inc();
            try {
              await waitForIngestion(job.data.runId, job.signal);
            } finally {
              waiting.dec();
            }
            const outcome = await executeRun(
              job.data.runId,
              {
                ...engines,
                store,
                database: config.clickhouse.database,
                lagSeconds: config.exportLagSeconds,
                queryLimits: config.batchExportQueryLimits,
              },
              job.signal,
            ).catch(async (error: unknown) => {
              // The last attempt: Failed, not waiting for a retry that will not come.
              if (job.retryCount >= RETRY_LIMIT) {
                await store
                  .finish(job.data.runId, { status: 'Failed', error: messageOf(error) })
                  .catch(() => undefined);
                runsTotal.inc({ status: 'Failed' });
              }
              throw error;
            });
            if (outcome.status === 'skipped') return;
            runsTotal.inc({ status: outcome.status });
            if (outcome.status === 'Completed') {
              rowsTotal.inc(outcome.records);
              bytesTotal.inc(outcome.bytes);
              duration.observe(outcome.durationMs / 1_000);
            }
          },
        );
        await importApps?.start(boss);
        started = true;
        logger.info(
          { concurrency: config.concurrency, importApps: importApps !== undefined },
          'workers running batch exports and import apps',
        );
        break;
      } catch (error) {
        if (stopSignal.signal.aborted) return;
        logger.warn({ err: error, attempt }, 'workers cannot start the job engine yet; retrying');
        await boss.stop({ graceful: false, close: true }).catch(() => undefined);
        await sleep(Math.min(500 * 2 ** (attempt - 1), 15_000), stopSignal.signal);
      }
    }
    while (!stopSignal.signal.aborted) {
      try {
        await tick();
        if (lastTickError) logger.info('batch-export scheduling works again');
        lastTickError = undefined;
      } catch (error) {
        if (lastTickError !== messageOf(error))
          logger.warn({ err: error }, 'batch-export scheduling failed; retrying');
        lastTickError = messageOf(error);
      }
      await sleep(tickMs, stopSignal.signal);
    }
  })();

  return Promise.resolve({
    metrics,
    ready: () =>
      checkReadiness({
        required: {
          jobEngine: () => started || 'the job engine is starting',
          scheduling: () => (lastTickError ? `scheduling fails: ${lastTickError}` : true),
          importApps: () => importApps?.ready() ?? true,
          postgres: async () => {
            await pool.query('SELECT 1');
            return true;
          },
        },
      }),
    async stop() {
      stopSignal.abort();
      await loop;
      await importApps?.stopScheduling();
      // Then pg-boss hands the runs in progress back for a retry, which resumes from their cursor.
      await boss.stop({ graceful: true, timeout: STOP_GRACE_MS, close: true }).catch(() => undefined);
      await importApps?.close();
    },
  });
}
