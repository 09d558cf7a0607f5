import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { loadKafkaConfig } from '@hogbase/config';
import { EVENTS_TOPIC, type QueueMessage } from '@hogbase/event-contract';
import { KafkaEventPublisher } from '@hogbase/queue';
import type { BenchConfig } from './bench.config';
import type { Project } from './bench-database.util';
import {
  median,
  percentile,
  printRoundsTable,
  summaryLine,
  type BenchSummary,
  type Metric,
} from './report.util';
import { recordSdkRequests, singleEventBody, toQueueMessages } from './sdk-requests.util';
import { processCpuMs } from './process-cpu.util';
import type { TargetProcess } from './target-process.util';

export interface CaptureBenchTargets {
  ceiling: TargetProcess;
  capture: TargetProcess;
  brokers: string[];
}

const DISTINCT_BATCH_BODIES = 32;
const DISTINCT_SINGLE_BODIES = 500;

interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  /** User + system, ms. */
  cpuMs: number;
}

interface LoadPath {
  name: 'ceiling' | 'publish' | 'capture';
  run(durationSeconds: number): Promise<LoadResult>;
}

/** Closed loop: each connection sends its next request once the previous one is answered. */
function httpPath(
  name: 'ceiling' | 'capture',
  target: TargetProcess,
  requests: autocannon.Request[],
  connections: number,
): LoadPath {
  return {
    name,
    async run(durationSeconds) {
      const cpuBefore = processCpuMs(target.pid);
      const result = await autocannon({ url: target.url, connections, duration: durationSeconds, requests });
      const cpuMs = processCpuMs(target.pid) - cpuBefore;
      return {
        cpuMs,
        // Only 2xx count: a 503 (Kafka too slow) is not an event captured.
        requestsPerSecond: result['2xx'] / result.duration,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        failed: result.non2xx + result.errors,
      };
    },
  };
}

/**
 * The Kafka part of capture alone: the same messages through a publisher set up as capture's, as many
 * in flight as the HTTP paths have connections. No HTTP, no decoding.
 */
function publishPath(
  publisher: KafkaEventPublisher,
  messages: QueueMessage[][],
  concurrency: number,
): LoadPath {
  return {
    name: 'publish',
    async run(durationSeconds) {
      const latencies: number[] = [];
      let failed = 0;
      const cpuBefore = process.cpuUsage();
      const startedAt = performance.now();
      const endAt = startedAt + durationSeconds * 1000;
      await Promise.all(
        Array.from({ length: concurrency }, async (_, worker) => {
          for (let index = worker; performance.now() < endAt; index += concurrency) {
            const publishedAt = performance.now();
            try {
              await publisher.publish(EVENTS_TOPIC, messages[index % messages.length]);
              latencies.push(performance.now() - publishedAt);
            } catch {
              failed += 1;
            }
          }
        }),
      );
      const cpu = process.cpuUsage(cpuBefore);
      return {
        cpuMs: (cpu.user + cpu.system) / 1000,
        requestsPerSecond: latencies.length / ((performance.now() - startedAt) / 1000),
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        failed,
      };
    },
  };
}

/** Rotating order; ratios per round (its runs are seconds apart), then their median. */
async function comparePaths(
  config: BenchConfig,
  paths: LoadPath[],
  log: (message: string) => void,
): Promise<Record<LoadPath['name'], LoadResult[]>> {
  if (config.warmupSeconds > 0) {
    for (const path of paths) await path.run(config.warmupSeconds);
  }
  const results: Record<LoadPath['name'], LoadResult[]> = { ceiling: [], publish: [], capture: [] };
  for (let round = 0; round < config.rounds; round += 1) {
    const order = [...paths.slice(round % paths.length), ...paths.slice(0, round % paths.length)];
    for (const path of order) {
      const result = await path.run(config.durationSeconds);
      results[path.name].push(result);
      log(
        `round ${round + 1} ${path.name}: ${Math.round(result.requestsPerSecond)} req/s, ` +
          `p50 ${Math.round(result.p50Ms)} ms, p99 ${Math.round(result.p99Ms)} ms` +
          (result.failed > 0 ? `, ${result.failed} failed` : ''),
      );
    }
  }
  return results;
}

function comparisonMetrics(
  results: Record<LoadPath['name'], LoadResult[]>,
  eventsPerRequest: number,
  durationSeconds: number,
): Metric[] {
  const eventsPerSecond = (result: LoadResult) => result.requestsPerSecond * eventsPerRequest;
  const cpuPerThousand = (result: LoadResult) =>
    result.cpuMs / ((eventsPerSecond(result) * durationSeconds) / 1000);
  const ratio = (of: LoadResult[], to: LoadResult[]) =>
    of.map((result, round) => result.requestsPerSecond / to[round].requestsPerSecond);
  return [
    {
      key: 'ceiling_events_per_s',
      label: 'ceiling (read + parse only): events/s',
      rounds: results.ceiling.map(eventsPerSecond),
    },
    {
      key: 'publish_events_per_s',
      label: 'Kafka publish alone: events/s',
      rounds: results.publish.map(eventsPerSecond),
    },
    { key: 'capture_events_per_s', label: 'capture: events/s', rounds: results.capture.map(eventsPerSecond) },
    {
      key: 'capture_to_ceiling',
      label: 'capture / ceiling',
      rounds: ratio(results.capture, results.ceiling),
      digits: 2,
    },
    {
      key: 'capture_to_publish',
      label: 'capture / Kafka publish alone',
      rounds: ratio(results.capture, results.publish),
      digits: 2,
    },
    {
      key: 'ceiling_p99_ms',
      label: 'ceiling: p99 latency (ms)',
      rounds: results.ceiling.map((result) => result.p99Ms),
    },
    {
      key: 'publish_p99_ms',
      label: 'Kafka publish alone: p99 (ms)',
      rounds: results.publish.map((result) => result.p99Ms),
    },
    {
      key: 'capture_p50_ms',
      label: 'capture: p50 latency (ms)',
      rounds: results.capture.map((result) => result.p50Ms),
    },
    {
      key: 'capture_p99_ms',
      label: 'capture: p99 latency (ms)',
      rounds: results.capture.map((result) => result.p99Ms),
    },
    {
      key: 'capture_cpu_ms_per_1000_events',
      label: 'capture: CPU ms per 1,000 events',
      rounds: results.capture.map((result) => cpuPerThousand(result)),
      digits: 1,
    },
    {
      key: 'publish_cpu_ms_per_1000_events',
      label: 'Kafka publish alone: CPU ms per 1,000 events',
      rounds: results.publish.map((result) => cpuPerThousand(result)),
      digits: 1,
    },
    {
      key: 'ceiling_cpu_ms_per_1000_events',
      label: 'ceiling: CPU ms per 1,000 events',
      rounds: results.ceiling.map((result) => cpuPerThousand(result)),
      digits: 1,
    },
    {
      key: 'capture_failed',
      label: 'capture: non-2xx + errors',
      rounds: results.capture.map((result) => result.failed),
    },
  ];
}

async function compare(
  config: BenchConfig,
  targets: CaptureBenchTargets,
  requests: autocannon.Request[],
  messages: QueueMessage[][],
  log: (message: string) => void,
): Promise<Record<LoadPath['name'], LoadResult[]>> {
  const kafka = loadKafkaConfig({ KAFKA_BROKERS: targets.brokers.join(',') });
  const publisher = new KafkaEventPublisher({
    brokers: targets.brokers,
    clientId: `${kafka.clientId}-bench`,
    timeoutMs: kafka.producerTimeoutMs,
    maxMessageBytes: kafka.maxMessageBytes,
  });
  try {
    await publisher.connect();
    return await comparePaths(
      config,
      [
        httpPath('ceiling', targets.ceiling, requests, config.connections),
        publishPath(publisher, messages, config.connections),
        httpPath('capture', targets.capture, requests, config.connections),
      ],
      log,
    );
  } finally {
    await publisher.close();
  }
}

/** 1. posthog-node /batch/ requests (gzip, 50 events) through capture and Kafka, beside the ceiling. */
export async function runBatchBench(
  config: BenchConfig,
  targets: CaptureBenchTargets,
  project: Project,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const recorded = await recordSdkRequests({
    token: project.token,
    requests: DISTINCT_BATCH_BODIES,
    eventsPerBatch: config.eventsPerBatch,
    persons: config.persons,
    seed: 1,
  });
  const requests = recorded.map((request) => ({
    method: 'POST',
    path: request.path,
    headers: request.headers,
    body: request.body,
  }));
  const messages = recorded.map((request) => toQueueMessages([request], project.id));
  const bodyBytes = Math.round(median(recorded.map((request) => request.body.length)));
  log(
    `/batch/: ${recorded.length} posthog-node bodies of ${config.eventsPerBatch} events, ` +
      `median ${bodyBytes} bytes gzipped; ${config.connections} connections, ${config.rounds} × ${config.durationSeconds} s per path`,
  );
  const metrics = comparisonMetrics(
    await compare(config, targets, requests, messages, log),
    config.eventsPerBatch,
    config.durationSeconds,
  );
  printRoundsTable(
    `1. /batch/ throughput, ${config.eventsPerBatch}-event posthog-node bodies (gzip), ${config.connections} connections: ` +
      'capture → Kafka (acks -1), beside a plain node:http ceiling and the Kafka publish alone',
    metrics,
  );
  return summaryLine(
    'batch',
    {
      events_per_batch: config.eventsPerBatch,
      body_bytes_gzip: bodyBytes,
      connections: config.connections,
      duration_s: config.durationSeconds,
    },
    metrics,
  );
}

/** 2. Single events on /capture/ (JSON), events/s and latency, beside the ceiling. */
export async function runSingleEventBench(
  config: BenchConfig,
  targets: CaptureBenchTargets,
  project: Project,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const recorded = await recordSdkRequests({
    token: project.token,
    requests: Math.ceil(DISTINCT_SINGLE_BODIES / config.eventsPerBatch),
    eventsPerBatch: config.eventsPerBatch,
    persons: config.persons,
    seed: 2,
  });
  const events = recorded.flatMap((request) => request.events).slice(0, DISTINCT_SINGLE_BODIES);
  const requests = events.map((event) => ({
    method: 'POST',
    path: '/capture/',
    headers: { 'Content-Type': 'application/json' },
    body: singleEventBody(project.token, event),
  }));
  const messages = toQueueMessages(recorded, project.id)
    .slice(0, DISTINCT_SINGLE_BODIES)
    .map((message) => [message]);
  const bodyBytes = median(requests.map((request) => Buffer.byteLength(request.body)));
  log(
    `/capture/: ${requests.length} single-event JSON bodies, median ${bodyBytes} bytes; ` +
      `${config.connections} connections, ${config.rounds} × ${config.durationSeconds} s per path`,
  );
  const metrics = comparisonMetrics(
    await compare(config, targets, requests, messages, log),
    1,
    config.durationSeconds,
  );
  printRoundsTable(
    `2. /capture/ single events (JSON), ${config.connections} connections: capture → Kafka (acks -1), ` +
      'beside a plain node:http ceiling and the Kafka publish alone',
    metrics,
  );
  return summaryLine(
    'capture',
    { body_bytes: bodyBytes, connections: config.connections, duration_s: config.durationSeconds },
    metrics,
  );
}
