import type { Pool } from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { createAppsRuntime, type AppInstance, type AppsRuntime } from '@hogbase/apps-runtime';
import type { SandboxJson } from '@hogbase/apps-sandbox';
import type { AppsRuntimeConfig } from '@hogbase/config';
import { sleep, type EventPublisher } from '@hogbase/queue';
import { AppCapturePublisher } from './app-capture.publisher';
import {
  isScheduledTask,
  scheduledJobId,
  slotOf,
  taskPeriodMs,
  untilNextTick,
  type ScheduledTask,
} from './schedule.util';

/** The job's id names (config, task, period); its singleton key (config, task). */
export const SCHEDULED_TASKS_QUEUE = 'app-scheduled-tasks';
export const APP_JOBS_QUEUE = 'app-jobs';

interface ScheduledJob {
  pluginConfigId: number;
  task: ScheduledTask;
}

interface AppJob {
  pluginConfigId: number;
  job: string;
  payload: SandboxJson;
}

export interface ImportAppsOptions {
  pool: Pool;
  config: AppsRuntimeConfig;
  publisher: EventPublisher;
  logger: Logger;
  registry: Registry;
  /** runEveryMinute's period. */
  tickMs?: number;
  /** Per queue. */
  concurrency?: number;
}

type Outcome = 'ok' | 'failed' | 'skipped';

/**
 * PostHog's `runEveryMinute/Hour/Day` and app jobs on the workers' job engine (README.md). Any
 * number of workers may offer a period's run: its job id is derived from (config, task, period), and
 * the queue is `exclusive` on (config, task), so a slow app skips ticks, never runs twice at once.
 */
export class ImportApps {
  private readonly runtime: AppsRuntime;
  private readonly capturer: AppCapturePublisher;
  private readonly tickMs: number;
  private readonly taskRuns: Counter<'task' | 'outcome'>;
  private readonly busyTicks: Counter<'task'>;
  private readonly jobRuns: Counter<'outcome'>;
  private readonly captured: Counter;
  private boss: PgBoss | undefined;
  private loop: Promise<void> | undefined;
  private readonly stopSignal = new AbortController();
  private lastTickError: string | undefined;

  constructor(private readonly options: ImportAppsOptions) {
    this.tickMs = options.tickMs ?? 60_000;
    this.capturer = new AppCapturePublisher(options.pool, options.publisher);
    this.runtime = createAppsRuntime(options.pool, options.config, options.logger, {
      capture: async (event) => {
        await this.capturer.capture(event);
        this.captured.inc();
      },
      enqueueJob: async (app, job, payload, runAt) => {
        if (!this.boss) throw new Error('the job engine is not started yet');
        const data: AppJob = { pluginConfigId: app.pluginConfigId, job, payload };
        await this.boss.send(APP_JOBS_QUEUE, data, { startAfter: runAt });
      },
    });
    const registers = [options.registry];
    this.taskRuns = new Counter({
      name: 'import_app_scheduled_task_runs_total',
      help: 'Runs of import apps’ scheduled tasks, by task and outcome (ok, failed, skipped: the app is off or lacks the task)',
      labelNames: ['task', 'outcome'],
      registers,
    });
    this.busyTicks = new Counter({
      name: 'import_app_scheduled_ticks_busy_total',
      help: 'Ticks not run because the previous run of the same config and task was still waiting or running',
      labelNames: ['task'],
      registers,
    });
    this.jobRuns = new Counter({
      name: 'import_app_jobs_total',
      help: 'App jobs (meta.jobs) run, by outcome (ok, failed, skipped: the app is off or lacks the job)',
      labelNames: ['outcome'],
      registers,
    });
    this.captured = new Counter({
      name: 'import_app_captured_events_total',
      help: 'Events import apps captured (posthog.capture) onto the events queue',
      registers,
    });
  }

  async start(boss: PgBoss): Promise<void> {
    const callLimitSeconds = Math.ceil(this.options.config.timeLimitMs / 1_000);
    // A run holds its key while active: after a crash the job engine frees it once this has passed.
    const expireInSeconds = Math.max(60, 2 * callLimitSeconds + 30);
    await boss.createQueue(SCHEDULED_TASKS_QUEUE, {
      policy: 'exclusive',
      retryLimit: 0,
      expireInSeconds,
      deleteAfterSeconds: 3_600,
    });
    await boss.createQueue(APP_JOBS_QUEUE, {
      retryLimit: 0,
      expireInSeconds,
      deleteAfterSeconds: 86_400,
      // runAt may be far ahead.
      retentionSeconds: 366 * 86_400,
    });
    const concurrency = this.options.concurrency ?? 2;
    await boss.work<ScheduledJob>(
      SCHEDULED_TASKS_QUEUE,
      { localConcurrency: concurrency, pollingIntervalSeconds: 0.5 },
      async ([job]) => this.runScheduled(job.data),
    );
    await boss.work<AppJob>(
      APP_JOBS_QUEUE,
      { localConcurrency: concurrency, pollingIntervalSeconds: 0.5 },
      async ([job]) => this.runJob(job.data),
    );
    this.boss = boss;
    this.loop ??= this.tickLoop(boss);
  }

  ready(): true | string {
    return this.lastTickError ? `import-app scheduling fails: ${this.lastTickError}` : true;
  }

  /** The job engine's graceful stop then lets the runs in progress finish. */
  async stopScheduling(): Promise<void> {
    this.stopSignal.abort();
    await this.loop;
  }

  /** After the job engine stopped: teardownPlugin, and the last log lines. */
  async close(): Promise<void> {
    this.stopSignal.abort();
    await this.loop;
    await this.runtime.close();
  }

  private async tickLoop(boss: PgBoss): Promise<void> {
    const { logger } = this.options;
    while (!this.stopSignal.signal.aborted) {
      try {
        await this.offerRuns(boss, Date.now());
        if (this.lastTickError) logger.info('import-app scheduling works again');
        this.lastTickError = undefined;
      } catch (error) {
        if (this.lastTickError !== messageOf(error)) {
          logger.warn({ err: error }, 'import-app scheduling failed; retrying at the next tick');
        }
        this.lastTickError = messageOf(error);
      }
      await sleep(untilNextTick(Date.now(), this.tickMs), this.stopSignal.signal);
    }
  }

  private async offerRuns(boss: PgBoss, now: number): Promise<void> {
    const { rows } = await this.options.pool.query<{ id: number; tasks: unknown }>(
      `SELECT c.id, p.capabilities -> 'scheduled_tasks' AS tasks
       FROM plugin_configs c JOIN plugins p ON p.id = c.plugin_id
       WHERE c.enabled AND NOT c.deleted AND jsonb_typeof(p.capabilities -> 'scheduled_tasks') = 'array'
         AND jsonb_array_length(p.capabilities -> 'scheduled_tasks') > 0
       ORDER BY c.id`,
    );
    for (const row of rows) {
      const tasks = Array.isArray(row.tasks) ? row.tasks.filter(isScheduledTask) : [];
      for (const task of tasks) {
        const slot = slotOf(task, now, this.tickMs);
        const id = scheduledJobId(row.id, task, slot);
        const data: ScheduledJob = { pluginConfigId: row.id, task };
        const periodSeconds = Math.max(1, Math.floor(taskPeriodMs(task, this.tickMs) / 1_000));
        const sent = await boss.send(SCHEDULED_TASKS_QUEUE, data, {
          id,
          singletonKey: `${row.id}/${task}`,
          // A run that could not start within its period is dropped; kept past it, its id still blocks a second.
          retentionSeconds: periodSeconds,
          deleteAfterSeconds: Math.max(3_600, 2 * periodSeconds),
        });
        // Not sent: another worker sent it already (fine), or the previous run still holds the key.
        if (sent === null && (await boss.findJobs(SCHEDULED_TASKS_QUEUE, { id })).length === 0) {
          this.busyTicks.inc({ task });
        }
      }
    }
  }

  private async runScheduled({ pluginConfigId, task }: ScheduledJob): Promise<void> {
    const outcome = await this.runOnApp(pluginConfigId, task, (instance) => instance.call(task));
    this.taskRuns.inc({ task, outcome });
  }

  private async runJob({ pluginConfigId, job, payload }: AppJob): Promise<void> {
    const outcome = await this.runOnApp(pluginConfigId, `jobs.${job}`, (instance) =>
      instance.call(`jobs.${job}`, payload),
    );
    this.jobRuns.inc({ outcome });
  }

  /** The app's error is logged to its config; only a failure to reach Postgres is thrown. */
  private async runOnApp(
    pluginConfigId: number,
    method: string,
    work: (instance: AppInstance) => Promise<unknown>,
  ): Promise<Outcome> {
    const instance = await this.runtime.apps.forConfig(pluginConfigId).catch((error: unknown) => {
      this.options.logger.warn(
        { err: error, pluginConfigId, method },
        'import app not loaded: Postgres failed',
      );
      return null;
    });
    if (instance === null) return 'failed';
    if (instance === undefined) return 'skipped'; // disabled, deleted, or it does not start (logged)
    try {
      const { methods, jobs } = await instance.exports();
      const exported = method.startsWith('jobs.')
        ? jobs.includes(method.slice('jobs.'.length))
        : (methods as string[]).includes(method);
      if (!exported) {
        if (method.startsWith('jobs.')) instance.logLine('WARN', `The app has no job ${method.slice(5)}`);
        return 'skipped';
      }
      await work(instance);
      return 'ok';
    } catch (error) {
      instance.logLine('ERROR', `${method} failed: ${messageOf(error)}`, 'PLUGIN');
      return 'failed';
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
