import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createAppsRuntime } from '@hogbase/apps-runtime';
import type { SandboxJson } from '@hogbase/apps-sandbox';
import { ensureTopics, KafkaEventPublisher, type ConsumedBatch } from '@hogbase/queue';
import type { BenchConfig } from './bench.config';
import type { BenchDatabase, Project } from './bench-database.util';
import type { BenchIngestion, IngestionPipeline } from './ingestion-pipeline.util';
import { printRoundsTable, summaryLine, type BenchSummary, type Metric } from './report.util';
import { recordSdkRequests, toQueueMessages } from './sdk-requests.util';
import { startWebhookReceiver, type Arrivals, type WebhookReceiver } from './webhook-receiver.util';

/** Per publish call while filling a topic. */
const PRODUCE_CHUNK = 5_000;
/** Kept per round to time the app's two steps outside the job engine. */
const REPLAYED_EVENTS = 500;
const BATCH_QUEUE = 'app-destinations';
const RETRY_QUEUE = 'app-destination-retries';
/** AppDestinations' default concurrency. */
const JOB_WORKERS = 2;

const DESTINATION_CODE = `exports.composeWebhook = (event, { config }) => ({
  url: config.url,
  body: JSON.stringify({ uuid: event.uuid, event: event.event, distinct_id: event.distinct_id, properties: event.properties }),
  headers: { 'Content-Type': 'application/json' },
  method: 'POST',
});
`;

const logger = pino({ level: 'warn' }).child({ app: 'ingestion' });

type Variant = 'bare' | 'apps';

interface Drain {
  eventsPerSecond: number;
  startupSeconds: number;
  firstBatchAt: number;
  /** Stored and handed off. */
  finishedAt: number;
}

interface JobStats {
  jobs: number;
  events: number;
  /** The workers' time inside jobs. */
  busySeconds: number;
  spanSeconds: number;
  /** Created → started. */
  medianWaitSeconds: number;
  retryJobs: number;
}

interface StepTimes {
  sandboxMs: number;
  fetchMs: number;
}

interface Round {
  bare: Drain;
  apps: Drain;
  arrivals: Arrivals;
  jobs: JobStats;
  steps: StepTimes;
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, describe: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(describe())), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Unlike the ingestion bench's drain it leaves the service running: its destinations keep delivering. */
async function drain(
  groupId: string,
  expected: number,
  start: (onBatch: (batch: ConsumedBatch, startedAt: number) => void) => Promise<BenchIngestion>,
): Promise<{ drained: Drain; service: BenchIngestion }> {
  const startedAt = performance.now();
  let firstBatchAt: number | undefined;
  let handled = 0;
  let finish: (doneAt: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const service = await start((batch, batchStartedAt) => {
    firstBatchAt = Math.min(firstBatchAt ?? batchStartedAt, batchStartedAt);
    handled += batch.messages.length;
    if (handled >= expected) finish(performance.now());
  });
  try {
    // Generous: a slow machine shows a low figure, not a failure.
    const finishedAt = await withTimeout(
      done,
      Math.max(120_000, expected * 5),
      () => `${groupId}: ${handled} of ${expected} events ingested`,
    );
    const first = firstBatchAt ?? startedAt;
    return {
      drained: {
        eventsPerSecond: expected / ((finishedAt - first) / 1000),
        startupSeconds: (first - startedAt) / 1000,
        firstBatchAt: first,
        finishedAt,
      },
      service,
    };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

async function installDestination(pipeline: IngestionPipeline, project: Project, url: string): Promise<void> {
  const { pool } = pipeline;
  const pluginId = (
    await pool.query<{ id: number }>(
      `INSERT INTO plugins (organization_id, plugin_type, name, capabilities, metrics)
       SELECT organization_id, 'source', 'bench webhook', $2, '{}' FROM teams WHERE id = $1 RETURNING id`,
      [project.id, JSON.stringify({ methods: ['composeWebhook'] })],
    )
  ).rows[0].id;
  await pool.query(
    `INSERT INTO plugin_source_files (plugin_id, filename, source, transpiled, status)
     VALUES ($1, 'index.js', $2, $2, 'TRANSPILED')`,
    [pluginId, DESTINATION_CODE],
  );
  await pool.query(
    `INSERT INTO plugin_configs (plugin_id, team_id, enabled, "order", config, web_token)
     VALUES ($1, $2, true, 0, $3, $4)`,
    [pluginId, project.id, JSON.stringify({ url }), randomBytes(16).toString('hex')],
  );
}

async function jobStats(pipeline: IngestionPipeline, teamId: number): Promise<JobStats> {
  const { rows } = await pipeline.pool.query<{
    jobs: number;
    events: number | null;
    busy_s: number | null;
    span_s: number | null;
    wait_s: number | null;
    unfinished: number;
  }>(
    `SELECT count(*)::int AS jobs,
            sum(jsonb_array_length(data -> 'events'))::int AS events,
            extract(epoch FROM sum(completed_on - started_on))::float8 AS busy_s,
            extract(epoch FROM max(completed_on) - min(started_on))::float8 AS span_s,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_on - created_on))::float8 AS wait_s,
            count(*) FILTER (WHERE state <> 'completed')::int AS unfinished
       FROM pgboss.job
      WHERE name = $1 AND (data -> 'events' -> 0 ->> 'team_id')::int = $2`,
    [BATCH_QUEUE, teamId],
  );
  const retries = await pipeline.pool.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM pgboss.job WHERE name = $1 AND (data -> 'event' ->> 'team_id')::int = $2`,
    [RETRY_QUEUE, teamId],
  );
  const [row] = rows;
  if (row.unfinished > 0)
    throw new Error(`${row.unfinished} batch jobs of project ${teamId} did not complete`);
  return {
    jobs: row.jobs,
    events: row.events ?? 0,
    busySeconds: row.busy_s ?? Number.NaN,
    spanSeconds: row.span_s ?? Number.NaN,
    medianWaitSeconds: row.wait_s ?? Number.NaN,
    retryJobs: retries.rows[0].count,
  };
}

/**
 * The two steps a worker takes per event, timed alone: the sandbox's `composeWebhook`, then the fetch.
 * Beside the job rows they say how much of a job is the app and how much the engine around it.
 */
async function timeSteps(pipeline: IngestionPipeline, teamId: number, bodies: string[]): Promise<StepTimes> {
  const runtime = createAppsRuntime(pipeline.pool, pipeline.config.apps, logger);
  try {
    const [instance] = await runtime.apps.forTeam(teamId);
    if (!instance) throw new Error(`project ${teamId} has no enabled destination`);
    const events = bodies.map((body): SandboxJson => {
      const sent = JSON.parse(body) as Record<string, SandboxJson>;
      return {
        ...sent,
        team_id: teamId,
        timestamp: new Date().toISOString(),
        elements_chain: '',
        person: { uuid: sent.uuid, properties: {}, created_at: new Date().toISOString() },
      };
    });
    await instance.call('composeWebhook', events[0]); // loads the sandbox: not a per-event cost
    const webhooks: { url: string; method: string; headers: Record<string, string>; body: string }[] = [];
    const composedAt = performance.now();
    for (const event of events) {
      webhooks.push((await instance.call('composeWebhook', event)) as (typeof webhooks)[number]);
    }
    const sandboxMs = (performance.now() - composedAt) / events.length;
    const fetchedAt = performance.now();
    for (const webhook of webhooks) {
      const response = await runtime.services.fetch(webhook.url, webhook);
      if (response.status !== 200) throw new Error(`the receiver answered ${response.status}`);
    }
    return { sandboxMs, fetchMs: (performance.now() - fetchedAt) / webhooks.length };
  } finally {
    await runtime.close();
  }
}

/**
 * 8. Kafka → ingestion with one `composeWebhook` destination → webhooks on a loopback receiver, against
 * bare ingestion in rotating order; then every event's webhook must reach the receiver.
 */
export async function runAppsBench(
  config: BenchConfig,
  pipeline: IngestionPipeline,
  database: BenchDatabase,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const requests = await recordSdkRequests({
    token: 'phc_apps_bench',
    requests: Math.ceil(config.appsEvents / config.eventsPerBatch),
    eventsPerBatch: config.eventsPerBatch,
    persons: config.persons,
    seed: 8,
  });
  const events = requests.length * config.eventsPerBatch;
  const producer = new KafkaEventPublisher({
    brokers: pipeline.kafka.brokers,
    clientId: 'hogbase-bench-producer',
    timeoutMs: 60_000,
  });
  let receiver: WebhookReceiver | undefined;
  const rounds: Round[] = [];
  try {
    receiver = await startWebhookReceiver();
    for (let round = 1; round <= config.rounds; round += 1) {
      const projects = {
        bare: await database.createProject(`apps round ${round} without apps`),
        apps: await database.createProject(`apps round ${round} with a destination`),
      };
      await installDestination(pipeline, projects.apps, receiver.url);
      const topics = {
        bare: `bench_apps_${process.pid}_${round}_bare`,
        apps: `bench_apps_${process.pid}_${round}_apps`,
      };
      let uuids = new Set<string>();
      for (const variant of ['bare', 'apps'] as const) {
        const messages = toQueueMessages(requests, projects[variant].id, projects[variant].token);
        if (variant === 'apps') {
          uuids = new Set(messages.map((message) => (JSON.parse(message.value) as { uuid: string }).uuid));
        }
        await ensureTopics(pipeline.kafka.brokers, [
          { name: topics[variant], partitions: pipeline.kafka.topicPartitions, replicationFactor: 1 },
        ]);
        for (let start = 0; start < messages.length; start += PRODUCE_CHUNK) {
          await producer.publish(topics[variant], messages.slice(start, start + PRODUCE_CHUNK));
        }
      }
      log(`round ${round}: ${events} events on ${topics.bare} and on ${topics.apps}`);

      const order: Variant[] = round % 2 === 1 ? ['bare', 'apps'] : ['apps', 'bare'];
      const drained: Partial<Record<Variant, Drain>> = {};
      let arrivals: Arrivals | undefined;
      for (const variant of order) {
        const groupId = `${topics[variant]}_ingestion`;
        const expected = variant === 'apps' ? receiver.expect(uuids, REPLAYED_EVENTS) : undefined;
        const { drained: result, service } = await drain(groupId, events, (onBatch) =>
          pipeline.startIngestion(groupId, [topics[variant]], true, onBatch, {
            withApps: variant === 'apps',
          }),
        );
        drained[variant] = result;
        try {
          if (expected) {
            // A slow delivery is a figure, not a failure, up to a point.
            arrivals = await withTimeout(expected.done, Math.max(300_000, events * 50), () => {
              const current = expected.current();
              return `round ${round}: ${current.received} of ${events} webhooks arrived`;
            });
          }
        } finally {
          await service.stop();
        }
        const stored = await pipeline.countEvents(projects[variant].id);
        const outcomes = JSON.stringify(await service.outcomes());
        if (stored !== events) {
          throw new Error(
            `round ${round} ${variant}: ${stored} of ${events} events in ClickHouse (${outcomes})`,
          );
        }
      }
      if (!arrivals || !drained.bare || !drained.apps)
        throw new Error(`round ${round} did not run both variants`);
      const jobs = await jobStats(pipeline, projects.apps.id);
      if (jobs.events !== events) {
        throw new Error(`round ${round}: ${jobs.events} of ${events} events handed to the job engine`);
      }
      const steps = await timeSteps(pipeline, projects.apps.id, arrivals.samples);
      rounds.push({ bare: drained.bare, apps: drained.apps, arrivals, jobs, steps });
      const delivery = (arrivals.lastAt - arrivals.firstAt) / 1000;
      log(
        `round ${round} (${order.join(' first, ')}): bare ${Math.round(drained.bare.eventsPerSecond)} events/s, ` +
          `with the destination ${Math.round(drained.apps.eventsPerSecond)} events/s; ` +
          `${arrivals.received} webhooks in ${delivery.toFixed(1)} s (${Math.round(arrivals.received / delivery)}/s), ` +
          `the last ${((arrivals.lastAt - drained.apps.finishedAt) / 1000).toFixed(1)} s after ingestion; ` +
          `${jobs.jobs} jobs, ${arrivals.duplicates} duplicates, ${jobs.retryJobs} retries`,
      );
    }
  } finally {
    await producer.close();
    await receiver?.close();
  }

  const perRound = (pick: (round: Round) => number) => rounds.map(pick);
  const deliverySeconds = (round: Round) => (round.arrivals.lastAt - round.arrivals.firstAt) / 1000;
  const metrics: Metric[] = [
    {
      key: 'ingestion_events_per_s',
      label: 'ingestion without apps: events/s',
      rounds: perRound((round) => round.bare.eventsPerSecond),
    },
    {
      key: 'ingestion_with_destination_events_per_s',
      label: 'ingestion with the destination (stored + handed off): events/s',
      rounds: perRound((round) => round.apps.eventsPerSecond),
    },
    {
      key: 'with_destination_to_without',
      label: 'with the destination / without',
      rounds: perRound((round) => round.apps.eventsPerSecond / round.bare.eventsPerSecond),
      digits: 2,
    },
    {
      key: 'webhooks_per_s',
      label: 'delivery: webhooks/s, first to last received',
      rounds: perRound((round) => round.arrivals.received / deliverySeconds(round)),
    },
    {
      key: 'webhooks_to_ingestion',
      label: 'delivery / ingestion with the destination',
      rounds: perRound(
        (round) => round.arrivals.received / deliverySeconds(round) / round.apps.eventsPerSecond,
      ),
      digits: 2,
    },
    {
      key: 'first_webhook_after_start_s',
      label: 'delivery: first webhook after the first batch (s)',
      rounds: perRound((round) => (round.arrivals.firstAt - round.apps.firstBatchAt) / 1000),
      digits: 2,
    },
    {
      key: 'last_webhook_after_ingestion_s',
      label: 'delivery: last webhook after ingestion finished (s)',
      rounds: perRound((round) => (round.arrivals.lastAt - round.apps.finishedAt) / 1000),
      digits: 1,
    },
    {
      key: 'retried_deliveries',
      label: 'delivery: deliveries retried (retry jobs)',
      rounds: perRound((round) => round.jobs.retryJobs),
    },
    {
      key: 'job_events',
      label: 'job engine: events per batch job, mean',
      rounds: perRound((round) => round.jobs.events / round.jobs.jobs),
    },
    {
      key: 'job_wait_s',
      label: 'job engine: batch job queued → started, median (s)',
      rounds: perRound((round) => round.jobs.medianWaitSeconds),
      digits: 1,
    },
    {
      key: 'job_cycle_s',
      label: `job engine: one worker's fetch → next fetch, mean (s; polls every 0.5 s)`,
      rounds: perRound((round) => (JOB_WORKERS * round.jobs.spanSeconds) / round.jobs.jobs),
      digits: 2,
    },
    {
      key: 'job_busy_share',
      label: `job engine: workers inside jobs / (${JOB_WORKERS} workers × span)`,
      rounds: perRound((round) => round.jobs.busySeconds / (JOB_WORKERS * round.jobs.spanSeconds)),
      digits: 2,
    },
    {
      key: 'job_ms_per_event',
      label: 'job engine: worker time per event inside jobs (ms)',
      rounds: perRound((round) => (round.jobs.busySeconds * 1000) / round.jobs.events),
      digits: 2,
    },
    {
      key: 'sandbox_ms_per_event',
      label: `alone: composeWebhook in the sandbox per event (ms, ${REPLAYED_EVENTS} events)`,
      rounds: perRound((round) => round.steps.sandboxMs),
      digits: 2,
    },
    {
      key: 'fetch_ms_per_event',
      label: 'alone: the webhook fetch per event (ms)',
      rounds: perRound((round) => round.steps.fetchMs),
      digits: 2,
    },
  ];
  printRoundsTable(
    `8. Apps: ${events.toLocaleString('en-US')} events from Kafka (${pipeline.kafka.topicPartitions} partitions) ` +
      'through ingestion, without apps and with one composeWebhook destination, per round',
    metrics,
  );
  return summaryLine(
    'apps',
    {
      events,
      persons: config.persons,
      partitions: pipeline.kafka.topicPartitions,
    },
    metrics,
  );
}
