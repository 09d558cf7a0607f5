import type { Pool } from 'pg';
import { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { sleep } from '@hogbase/queue';
import { Counter, type Registry } from 'prom-client';
import { SandboxAppError, type SandboxFetch, type SandboxJson } from '@hogbase/apps-sandbox';
import { AppSkippedError, messageOf, type AppInstance } from './app-instance.service';
import { toBatchJobs, type BatchJobData } from './destination-jobs.util';
import { RUN_CAPABILITIES, type EnabledApps } from './enabled-apps.cache';
import type { PluginLogWriter } from './plugin-log.repository';

/** After ingestion stored it: PostHog's PostHogEvent fields. */
export interface DestinationEvent {
  uuid: string;
  event: string;
  team_id: number;
  distinct_id: string;
  properties: Record<string, unknown>;
  /** ISO 8601 UTC. */
  timestamp: string;
  elements_chain: string;
  person: { uuid: string; properties: Record<string, unknown>; created_at: string };
}

type BatchJob = BatchJobData;

interface RetryJob {
  pluginConfigId: number;
  event: DestinationEvent;
}

const BATCH_QUEUE = 'app-destinations';
const RETRY_QUEUE = 'app-destination-retries';
/** As PostHog retried a failing onEvent: 5 times, 5 s × 2^n apart. */
const RETRY_LIMIT = 5;
const RETRY_DELAY_SECONDS = 5;
const TEAMS_REFRESH_MS = 5_000;
/** Then the batch fails, and is retried. */
const START_WAIT_MS = 10_000;

/** The receiver or the network, not the app's own bug. */
class RetriableDeliveryError extends Error {}

export interface AppDestinationsOptions {
  pool: Pick<Pool, 'query'>;
  /** The same database: pg-boss keeps its tables in the `pgboss` schema. */
  connectionString: string;
  apps: EnabledApps;
  log: PluginLogWriter;
  fetch: SandboxFetch;
  logger: Logger;
  registry: Registry;
  /** Each batch job runs its events in order. */
  concurrency?: number;
}

/**
 * `composeWebhook` and `onEvent` behind ingestion, on the Postgres job engine: one job insert per
 * stored batch before ingestion commits, so a slow receiver never holds ingestion back and nothing
 * acknowledged misses its deliveries (at least once). Retries: README.md.
 */
export class AppDestinations {
  private readonly boss: PgBoss;
  private readonly deliveries: Counter<'outcome'>;
  private destinationTeamsCache: { teams: Set<number>; loadedAt: number } | undefined;
  private loadingTeams: Promise<Set<number>> | undefined;
  private started = false;
  private lastError: string | undefined;
  private readonly stopSignal = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly options: AppDestinationsOptions) {
    this.boss = new PgBoss({
      connectionString: options.connectionString,
      max: 2,
      schema: 'pgboss',
      application_name: 'app-destinations',
      superviseIntervalSeconds: 5,
      monitorIntervalSeconds: 5,
    });
    this.boss.on('error', (error) => {
      if (this.lastError !== messageOf(error))
        options.logger.warn({ err: error }, 'destinations job engine error; it retries');
      this.lastError = messageOf(error);
    });
    this.deliveries = new Counter({
      name: 'app_destination_deliveries_total',
      help: 'Destination deliveries of pipeline apps, by outcome (delivered, retrying, skipped, failed)',
      labelNames: ['outcome'],
      registers: [options.registry],
    });
  }

  /** Retries with back-off while Postgres is away. */
  start(): void {
    this.loop ??= this.run();
  }

  ready(): true | string {
    return this.started
      ? true
      : `the destinations job engine is starting${this.lastError ? `: ${this.lastError}` : ''}`;
  }

  /** Throws when Postgres cannot take them: the caller retries its batch. */
  async handOff(events: DestinationEvent[]): Promise<void> {
    if (events.length === 0) return;
    const teams = await this.destinationTeams();
    const wanted = events.filter((event) => teams.has(event.team_id));
    if (wanted.length === 0) return;
    await this.untilStarted();
    // Bounded by bytes too: every job is a row of the job engine's Postgres.
    const jobs = toBatchJobs(wanted, (event, bytes) =>
      this.options.logger.warn(
        { uuid: event.uuid, teamId: event.team_id, bytes },
        "destinations get this event without its person's properties: they are too large to queue",
      ),
    );
    await this.boss.insert(
      BATCH_QUEUE,
      jobs.map((data) => ({ data })),
    );
  }

  /** A batch right after start-up need not fail. */
  private async untilStarted(): Promise<void> {
    const deadline = Date.now() + START_WAIT_MS;
    while (!this.started) {
      if (this.stopSignal.signal.aborted || Date.now() > deadline) {
        throw new Error(
          `the destinations job engine is not started${this.lastError ? `: ${this.lastError}` : ''}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopSignal.abort();
    await this.loop;
    await this.boss.stop({ graceful: true, timeout: 8_000, close: true }).catch(() => undefined);
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    for (let attempt = 1; !this.stopSignal.signal.aborted; attempt++) {
      try {
        await this.boss.start();
        await this.boss.createQueue(BATCH_QUEUE, {
          retryLimit: RETRY_LIMIT,
          retryDelay: RETRY_DELAY_SECONDS,
          retryBackoff: true,
          expireInSeconds: 15 * 60,
          deleteAfterSeconds: 86_400,
        });
        await this.boss.createQueue(RETRY_QUEUE, {
          retryLimit: RETRY_LIMIT,
          retryDelay: RETRY_DELAY_SECONDS,
          retryBackoff: true,
          retryDelayMax: 3_600,
          expireInSeconds: 5 * 60,
          deleteAfterSeconds: 7 * 86_400,
        });
        // NOTE: several jobs a fetch, fetched again at once while full: the poll's sleep would idle a backlog.
        await this.boss.work<BatchJob>(
          BATCH_QUEUE,
          {
            localConcurrency: this.options.concurrency ?? 2,
            batchSize: 4,
            burstWhenBatchFull: true,
            pollingIntervalSeconds: 0.5,
          },
          async (jobs) => {
            for (const job of jobs) await this.runBatch(job.data.events);
          },
        );
        await this.boss.work<RetryJob>(
          RETRY_QUEUE,
          { localConcurrency: 2, pollingIntervalSeconds: 1 },
          async ([job]) => this.runRetry(job.data, job.retryCount >= RETRY_LIMIT),
        );
        this.started = true;
        this.lastError = undefined;
        logger.info('pipeline app destinations running');
        return;
      } catch (error) {
        if (this.stopSignal.signal.aborted) return;
        this.lastError = messageOf(error);
        logger.warn({ err: error, attempt }, 'destinations cannot start the job engine yet; retrying');
        await this.boss.stop({ graceful: false, close: true }).catch(() => undefined);
        await sleep(Math.min(500 * 2 ** (attempt - 1), 15_000), this.stopSignal.signal);
      }
    }
  }

  /** By the capabilities of the code each config runs (its pinned copy's for another organization's app). */
  async destinationTeams(): Promise<ReadonlySet<number>> {
    const cached = this.destinationTeamsCache;
    if (cached && Date.now() - cached.loadedAt < TEAMS_REFRESH_MS) return cached.teams;
    this.loadingTeams ??= this.options.pool
      .query<{ team_id: number }>(
        `SELECT DISTINCT c.team_id FROM plugin_configs c JOIN plugins p ON p.id = c.plugin_id
         WHERE c.enabled AND NOT c.deleted
           AND (${RUN_CAPABILITIES} -> 'methods') ?| array['onEvent', 'composeWebhook']`,
      )
      .then(({ rows }) => {
        const teams = new Set(rows.map((row) => row.team_id));
        this.destinationTeamsCache = { teams, loadedAt: Date.now() };
        return teams;
      })
      .finally(() => {
        this.loadingTeams = undefined;
      });
    return this.loadingTeams;
  }

  private async runBatch(events: DestinationEvent[]): Promise<void> {
    const retries: RetryJob[] = [];
    for (const event of events) {
      for (const instance of await this.options.apps.forTeam(event.team_id)) {
        const outcome = await this.deliver(instance, event);
        if (outcome === 'retry') retries.push({ pluginConfigId: instance.app.pluginConfigId, event });
      }
    }
    if (retries.length > 0) {
      await this.boss.insert(
        RETRY_QUEUE,
        retries.map((data) => ({ data, startAfter: new Date(Date.now() + RETRY_DELAY_SECONDS * 1_000) })),
      );
    }
  }

  /** Throws to have pg-boss try again later, until the last attempt. */
  private async runRetry(job: RetryJob, lastAttempt: boolean): Promise<void> {
    const instance = await this.options.apps.forConfig(job.pluginConfigId);
    if (!instance) return; // disabled or deleted meanwhile: nothing to deliver to
    const outcome = await this.deliver(instance, job.event, lastAttempt);
    if (outcome === 'retry') throw new Error(`delivery of ${job.event.uuid} failed; retrying`);
  }

  /** Never throws: 'retry' asks for another attempt; the outcome is counted and failures are logged. */
  private async deliver(
    instance: AppInstance,
    event: DestinationEvent,
    lastAttempt = false,
  ): Promise<'ok' | 'retry' | 'failed'> {
    const { log } = this.options;
    const configId = instance.app.pluginConfigId;
    try {
      const exports = await instance.exports();
      if (exports.methods.includes('composeWebhook')) {
        const webhook = await instance.call('composeWebhook', postHogEvent(event));
        if (webhook !== null && webhook !== undefined) await this.sendWebhook(webhook);
      }
      if (exports.methods.includes('onEvent')) await instance.call('onEvent', processedPluginEvent(event));
      log.countDelivery(configId, { ok: true });
      this.deliveries.inc({ outcome: 'delivered' });
      return 'ok';
    } catch (error) {
      if (error instanceof AppSkippedError) return this.skipped(configId, error, lastAttempt);
      // The guest's own error name: a SandboxAppError's `name` is the host class's.
      const retriable =
        error instanceof RetriableDeliveryError ||
        (error instanceof SandboxAppError && error.appErrorName === 'RetryError');
      const message = `Delivery of event ${event.uuid} failed: ${messageOf(error)}`;
      if (retriable && !lastAttempt) {
        instance.logLine('WARN', `${message} (will retry)`);
        this.deliveries.inc({ outcome: 'retrying' });
        return 'retry';
      }
      instance.logLine('ERROR', lastAttempt ? `${message} (gave up after ${RETRY_LIMIT} retries)` : message);
      log.countDelivery(configId, { ok: false, error: messageOf(error) });
      this.deliveries.inc({ outcome: 'failed' });
      return 'failed';
    }
  }

  /**
   * NOTE: a skipped call never ran: it is owed, and waits in a retry job like a RetryError, since
   * PostHog's users expect a destination to catch up after a bad patch. Counted failed only at the
   * last attempt; no line per event (AppInstance logs how many calls it skipped).
   */
  private skipped(configId: number, error: AppSkippedError, lastAttempt: boolean): 'retry' | 'failed' {
    if (!lastAttempt) {
      this.deliveries.inc({ outcome: 'skipped' });
      return 'retry';
    }
    this.options.log.countDelivery(configId, { ok: false, error: messageOf(error) });
    this.deliveries.inc({ outcome: 'failed' });
    return 'failed';
  }

  private async sendWebhook(webhook: SandboxJson): Promise<void> {
    if (
      webhook === null ||
      typeof webhook !== 'object' ||
      Array.isArray(webhook) ||
      typeof webhook.url !== 'string'
    ) {
      throw new Error('composeWebhook must return { url, body?, headers?, method? } or null');
    }
    const headers =
      webhook.headers !== null && typeof webhook.headers === 'object' && !Array.isArray(webhook.headers)
        ? Object.fromEntries(
            Object.entries(webhook.headers).map(([name, value]) => [
              name,
              typeof value === 'string' ? value : JSON.stringify(value),
            ]),
          )
        : { 'Content-Type': 'application/json' };
    const body =
      webhook.body === undefined || webhook.body === null
        ? undefined
        : typeof webhook.body === 'string'
          ? webhook.body
          : JSON.stringify(webhook.body);
    let response;
    try {
      response = await this.options.fetch(webhook.url, {
        method: typeof webhook.method === 'string' ? webhook.method : 'POST',
        headers,
        body,
      });
    } catch (error) {
      throw new RetriableDeliveryError(messageOf(error));
    }
    if (response.status >= 500 || response.status === 429) {
      throw new RetriableDeliveryError(`the receiver answered ${response.status}`);
    }
    if (response.status >= 400) throw new Error(`the receiver answered ${response.status}`);
  }
}

/** PostHog's PostHogEvent; the timestamp as ISO text. */
function postHogEvent(event: DestinationEvent): SandboxJson {
  return {
    uuid: event.uuid,
    event: event.event,
    team_id: event.team_id,
    distinct_id: event.distinct_id,
    properties: event.properties as SandboxJson,
    timestamp: event.timestamp,
    elements_chain: event.elements_chain,
    person: event.person as unknown as SandboxJson,
  };
}

/** PostHog's ProcessedPluginEvent. */
function processedPluginEvent(event: DestinationEvent): SandboxJson {
  const properties = event.properties;
  return {
    uuid: event.uuid,
    event: event.event,
    team_id: event.team_id,
    distinct_id: event.distinct_id,
    ip: typeof properties.$ip === 'string' ? properties.$ip : null,
    properties: properties as SandboxJson,
    timestamp: event.timestamp,
    $set: (properties.$set ?? undefined) as SandboxJson,
    $set_once: (properties.$set_once ?? undefined) as SandboxJson,
    elements: [],
    person: event.person as unknown as SandboxJson,
  };
}
