import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENTS_TOPIC, type CapturedEvent } from '@hogbase/event-contract';
import type { ConsumedBatch } from '@hogbase/queue';
import type { BenchConfig } from './bench.config';
import type { BenchDatabase } from './bench-database.util';
import {
  BENCH_CLICKHOUSE_DATABASE,
  type BenchIngestion,
  type IngestionPipeline,
} from './ingestion-pipeline.util';
import {
  median,
  percentile,
  printRoundsTable,
  summaryLine,
  type BenchSummary,
  type Metric,
} from './report.util';
import { recordSdkRequests, type SdkRequest } from './sdk-requests.util';
import type { TargetProcess } from './target-process.util';

const POLL_INTERVAL_MS = 20;
const POLL_CHUNK = 5_000;
const WARMUP_INTERVAL_MS = 250;
const WARMUP_REQUESTS = 120;
const SETTLE_TIMEOUT_MS = 60_000;

interface Lags {
  /** Capture's 200 → the first SELECT by uuid that finds it, ms. */
  clickhouse: number[];
  /** Capture's 200 → a consume-only consumer receives it, ms. */
  kafka: number[];
}

/**
 * Exact to one poll interval plus one query. A consumer may receive an event before the 200 is read
 * (the broker acked it first): that lag counts as 0.
 */
class LagTracker {
  private readonly awaitingClickHouse = new Map<string, number>();
  private readonly awaitingKafka = new Map<string, number>();
  private readonly consumedEarly = new Map<string, number>();
  private lags: Lags = { clickhouse: [], kafka: [] };
  private polling: Promise<void> | undefined;
  private stopped = false;
  private failure: unknown;

  constructor(
    private readonly pipeline: IngestionPipeline,
    private readonly teamId: number,
  ) {}

  get pendingCount(): number {
    return this.awaitingClickHouse.size + this.awaitingKafka.size;
  }

  get foundCount(): { clickhouse: number; kafka: number } {
    return { clickhouse: this.lags.clickhouse.length, kafka: this.lags.kafka.length };
  }

  acknowledged(uuids: readonly string[], ackedAt: number): void {
    for (const uuid of uuids) {
      this.awaitingClickHouse.set(uuid, ackedAt);
      const consumedAt = this.consumedEarly.get(uuid);
      if (consumedAt === undefined) {
        this.awaitingKafka.set(uuid, ackedAt);
      } else {
        this.consumedEarly.delete(uuid);
        this.lags.kafka.push(Math.max(0, consumedAt - ackedAt));
      }
    }
  }

  readonly consume = (batch: ConsumedBatch): Promise<void> => {
    const consumedAt = performance.now();
    for (const message of batch.messages) {
      const event = JSON.parse(message.value) as CapturedEvent;
      if (event.team_id !== this.teamId) continue;
      const ackedAt = this.awaitingKafka.get(event.uuid);
      if (ackedAt === undefined) {
        this.consumedEarly.set(event.uuid, consumedAt);
      } else {
        this.awaitingKafka.delete(event.uuid);
        this.lags.kafka.push(consumedAt - ackedAt);
      }
    }
    return Promise.resolve();
  };

  /** Forgets them and every event still pending. */
  takeLags(): Lags {
    const lags = this.lags;
    this.lags = { clickhouse: [], kafka: [] };
    this.awaitingClickHouse.clear();
    this.awaitingKafka.clear();
    this.consumedEarly.clear();
    return lags;
  }

  start(): void {
    this.polling = (async () => {
      while (!this.stopped) {
        try {
          await this.pollClickHouse();
        } catch (error) {
          this.failure = error;
          return;
        }
        await sleep(POLL_INTERVAL_MS);
      }
    })();
  }

  assertPolling(): void {
    if (this.failure !== undefined) throw new Error('polling ClickHouse failed', { cause: this.failure });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.polling;
  }

  private async pollClickHouse(): Promise<void> {
    if (this.awaitingClickHouse.size === 0) return;
    const uuids = [...this.awaitingClickHouse.keys()].slice(0, POLL_CHUNK);
    const askedAt = performance.now();
    // `uuid IN {uuids:Array(UUID)}` silently matches nothing on chDB 3.4 (the array is one value);
    // the subquery form matches and still uses the sorting key.
    const result = await this.pipeline.clickhouse.query({
      query: `SELECT toString(uuid) AS uuid FROM ${BENCH_CLICKHOUSE_DATABASE}.events
              WHERE team_id = {teamId:Int64} AND uuid IN (SELECT arrayJoin({uuids:Array(UUID)}))`,
      query_params: { teamId: this.teamId, uuids },
      format: 'JSONEachRow',
    });
    for (const { uuid } of await result.json<{ uuid: string }>()) {
      const ackedAt = this.awaitingClickHouse.get(uuid);
      if (ackedAt === undefined) continue;
      this.awaitingClickHouse.delete(uuid);
      this.lags.clickhouse.push(Math.max(0, askedAt - ackedAt));
    }
  }
}

async function post(target: TargetProcess, request: SdkRequest): Promise<string> {
  try {
    const response = await fetch(`${target.url}${request.path}`, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
    });
    const body = await response.text();
    return response.status === 200 ? 'ok' : `${response.status} ${body.slice(0, 200)}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Open loop: each request at its due time, whether or not earlier ones were answered. */
async function sendAtRate(
  target: TargetProcess,
  requests: readonly SdkRequest[],
  perSecond: number,
  tracker: LagTracker,
): Promise<{ failed: number; lastFailure?: string }> {
  const intervalMs = 1000 / perSecond;
  const startedAt = performance.now();
  const sending: Promise<void>[] = [];
  let failed = 0;
  let lastFailure: string | undefined;
  for (const [index, request] of requests.entries()) {
    const wait = startedAt + index * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    sending.push(
      post(target, request).then((outcome) => {
        if (outcome === 'ok') {
          tracker.acknowledged(
            request.events.map((event) => String(event.uuid)),
            performance.now(),
          );
        } else {
          failed += 1;
          lastFailure = outcome;
        }
      }),
    );
  }
  await Promise.all(sending);
  return { failed, lastFailure };
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition() && performance.now() < deadline) await sleep(POLL_INTERVAL_MS);
}

/** 4. End-to-end lag; each round waits until every event is found (or a timeout) before the next. */
export async function runLagBench(
  config: BenchConfig,
  pipeline: IngestionPipeline,
  capture: TargetProcess,
  database: BenchDatabase,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const project = await database.createProject('end-to-end lag');
  const perRound = config.lagBatchesPerSecond * config.lagSeconds;
  const requests = await recordSdkRequests({
    token: project.token,
    requests: WARMUP_REQUESTS + perRound * config.rounds,
    eventsPerBatch: config.eventsPerBatch,
    persons: config.persons,
    seed: 4,
  });

  const tracker = new LagTracker(pipeline, project.id);
  // New groups start at the topic's end and read only what arrives after: warm up until both saw one.
  const consumeOnly = pipeline.createConsumer(`bench_lag_kafka_${process.pid}`, [EVENTS_TOPIC], false);
  const rounds: (Lags & { failed: number; unfound: number; callMs: number; callEvents: number })[] = [];
  let ingestion: BenchIngestion | undefined;
  try {
    ingestion = await pipeline.startIngestion(`bench_lag_${process.pid}`, [EVENTS_TOPIC], false);
    await consumeOnly.start(tracker.consume);
    tracker.start();
    const warmupStartedAt = performance.now();
    let lastFailure: string | undefined;
    const warm = () => tracker.foundCount.clickhouse > 0 && tracker.foundCount.kafka > 0;
    for (const request of requests.slice(0, WARMUP_REQUESTS)) {
      lastFailure = (await sendAtRate(capture, [request], 1, tracker)).lastFailure ?? lastFailure;
      await sleep(WARMUP_INTERVAL_MS);
      tracker.assertPolling();
      if (warm()) break;
    }
    if (!warm()) {
      throw new Error(
        `the pipeline did not deliver within ${WARMUP_REQUESTS} warm-up batches ` +
          `(ingestion: ${JSON.stringify(await ingestion.outcomes())}, ` +
          `rows of the project: ${await pipeline.countEvents(project.id)}` +
          (lastFailure ? `, capture answered: ${lastFailure}` : '') +
          ')',
      );
    }
    await sleep(1_000);
    tracker.takeLags();
    ingestion.takeCalls();
    log(`lag: pipeline warm after ${((performance.now() - warmupStartedAt) / 1000).toFixed(1)} s`);

    for (let round = 0; round < config.rounds; round += 1) {
      const start = WARMUP_REQUESTS + round * perRound;
      const { failed } = await sendAtRate(
        capture,
        requests.slice(start, start + perRound),
        config.lagBatchesPerSecond,
        tracker,
      );
      await waitUntil(() => tracker.pendingCount === 0, SETTLE_TIMEOUT_MS);
      tracker.assertPolling();
      const unfound = tracker.pendingCount;
      const lags = tracker.takeLags();
      const calls = ingestion.takeCalls();
      rounds.push({
        ...lags,
        failed,
        unfound,
        callMs: median(calls.durationsMs),
        callEvents: median(calls.sizes),
      });
      log(
        `round ${round + 1}: ${lags.clickhouse.length} events found, ` +
          `p50 ${Math.round(percentile(lags.clickhouse, 0.5))} ms (Kafka alone ${Math.round(percentile(lags.kafka, 0.5))} ms), ` +
          `p95 ${Math.round(percentile(lags.clickhouse, 0.95))} ms` +
          (failed + unfound > 0 ? `, ${failed} requests failed, ${unfound} events not arrived` : ''),
      );
    }
  } finally {
    await tracker.stop();
    await consumeOnly.stop();
    await ingestion?.stop();
  }

  const clickhouseP50 = rounds.map(({ clickhouse }) => percentile(clickhouse, 0.5));
  const kafkaP50 = rounds.map(({ kafka }) => percentile(kafka, 0.5));
  const metrics: Metric[] = [
    { key: 'kafka_p50_ms', label: 'Kafka delivery p50 (ms)', rounds: kafkaP50 },
    {
      key: 'kafka_p95_ms',
      label: 'Kafka delivery p95 (ms)',
      rounds: rounds.map(({ kafka }) => percentile(kafka, 0.95)),
    },
    { key: 'lag_p50_ms', label: 'ClickHouse lag p50 (ms)', rounds: clickhouseP50 },
    {
      key: 'lag_p95_ms',
      label: 'ClickHouse lag p95 (ms)',
      rounds: rounds.map(({ clickhouse }) => percentile(clickhouse, 0.95)),
    },
    {
      key: 'lag_p99_ms',
      label: 'ClickHouse lag p99 (ms)',
      rounds: rounds.map(({ clickhouse }) => percentile(clickhouse, 0.99)),
    },
    {
      key: 'lag_to_kafka_p50',
      label: 'ClickHouse lag / Kafka delivery (p50)',
      rounds: clickhouseP50.map((lag, round) => lag / kafkaP50[round]),
      digits: 1,
    },
    {
      key: 'handler_call_ms',
      label: 'ingestion: handler call, median (ms)',
      rounds: rounds.map(({ callMs }) => callMs),
    },
    {
      key: 'handler_call_events',
      label: 'ingestion: events per handler call, median',
      rounds: rounds.map(({ callEvents }) => callEvents),
    },
    {
      key: 'failed_requests',
      label: 'requests not answered 200',
      rounds: rounds.map(({ failed }) => failed),
    },
    { key: 'events_not_arrived', label: 'events not arrived', rounds: rounds.map(({ unfound }) => unfound) },
  ];
  const eventsPerSecond = config.lagBatchesPerSecond * config.eventsPerBatch;
  printRoundsTable(
    `4. End-to-end lag from capture's 200, ${config.lagBatchesPerSecond} batches/s (${eventsPerSecond} events/s) ` +
      `for ${config.lagSeconds} s per round: Kafka delivery (consume-only group) and listable in ClickHouse (SELECT by uuid)`,
    metrics,
  );
  return summaryLine(
    'lag',
    {
      batches_per_s: config.lagBatchesPerSecond,
      events_per_s: eventsPerSecond,
      round_s: config.lagSeconds,
      poll_interval_ms: POLL_INTERVAL_MS,
    },
    metrics,
  );
}
