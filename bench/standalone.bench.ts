import autocannon from 'autocannon';
import { startStandaloneForTest } from '../apps/standalone/test/app-process';
import type { BenchConfig } from './bench.config';
import { processCpuMs } from './process-cpu.util';
import { printRoundsTable, summaryLine, type BenchSummary, type Metric } from './report.util';
import { recordSdkRequests } from './sdk-requests.util';

/** Distinct recorded bodies each connection cycles through. */
const DISTINCT_BATCH_BODIES = 32;

interface StandaloneRound {
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  cpuMsPer1000: number;
  healthPerSecond: number;
}

/**
 * 9. `npm start`'s capture: posthog-node `/batch/` bodies against the standalone app as a user
 * starts it (a fresh DATA_DIR: the embedded Postgres, chDB, the in-process bus), where a 200 means
 * the events are stored (persons in Postgres, rows in ClickHouse). Baseline: `/_health` on the same
 * capture port, in the same rounds.
 */
export async function runStandaloneBench(
  config: BenchConfig,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const app = await startStandaloneForTest('hogbase-bench-standalone-');
  const rounds: StandaloneRound[] = [];
  try {
    const recorded = await recordSdkRequests({
      token: app.credentials.project_api_key,
      requests: DISTINCT_BATCH_BODIES,
      eventsPerBatch: config.eventsPerBatch,
      persons: config.persons,
      seed: 9,
    });
    const requests = recorded.map((request) => ({
      method: 'POST',
      path: request.path,
      headers: request.headers,
      body: request.body,
    }));
    const pid = app.server.child.pid!;
    const load = (duration: number) =>
      autocannon({ url: app.captureUrl, connections: config.connections, duration, requests });
    const health = () =>
      autocannon({
        url: `${app.captureUrl}/_health`,
        connections: config.connections,
        duration: config.durationSeconds,
      });
    log(
      `standalone: ${recorded.length} posthog-node bodies of ${config.eventsPerBatch} events, ` +
        `${config.connections} connections, ${config.rounds} × ${config.durationSeconds} s`,
    );
    await load(config.warmupSeconds);
    for (let round = 1; round <= config.rounds; round += 1) {
      // Rotating order, so that drift hits both alike.
      const healthFirst = round % 2 === 0;
      const healthBefore = healthFirst ? await health() : undefined;
      const cpuBefore = processCpuMs(pid);
      const result = await load(config.durationSeconds);
      const cpuMs = processCpuMs(pid) - cpuBefore;
      const healthResult = healthBefore ?? (await health());
      const events = result['2xx'] * config.eventsPerBatch;
      rounds.push({
        eventsPerSecond: events / result.duration,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        failed: result.non2xx + result.errors,
        cpuMsPer1000: events > 0 ? cpuMs / (events / 1000) : 0,
        healthPerSecond: healthResult['2xx'] / healthResult.duration,
      });
      const last = rounds.at(-1)!;
      log(
        `round ${round}: ${Math.round(last.eventsPerSecond)} events/s stored, p99 ${last.p99Ms} ms, ` +
          `${last.failed} failed; /_health ${Math.round(last.healthPerSecond)} requests/s`,
      );
    }
  } finally {
    const exit = await app.stop();
    if (exit.code !== 0) log(`the standalone app exited with ${JSON.stringify(exit)}`);
  }

  const metrics: Metric[] = [
    {
      key: 'health_requests_per_s',
      label: 'baseline /_health, requests/s',
      rounds: rounds.map((round) => round.healthPerSecond),
    },
    {
      key: 'events_per_s',
      label: '/batch/ → stored (in-process bus), events/s',
      rounds: rounds.map((round) => round.eventsPerSecond),
    },
    {
      key: 'batch_requests_to_health',
      label: '/batch/ requests/s / /_health',
      rounds: rounds.map((round) => round.eventsPerSecond / config.eventsPerBatch / round.healthPerSecond),
      digits: 3,
    },
    { key: 'p50_ms', label: '/batch/ latency p50, ms', rounds: rounds.map((round) => round.p50Ms) },
    { key: 'p99_ms', label: '/batch/ latency p99, ms', rounds: rounds.map((round) => round.p99Ms) },
    {
      key: 'cpu_ms_per_1000',
      label: 'standalone process CPU per 1,000 events, ms',
      rounds: rounds.map((round) => round.cpuMsPer1000),
    },
    { key: 'failed', label: 'non-2xx answers and errors', rounds: rounds.map((round) => round.failed) },
  ];
  printRoundsTable(
    `9. npm start: /batch/ with ${config.eventsPerBatch}-event posthog-node bodies, ${config.connections} connections, ` +
      'each 200 stored (embedded Postgres, chDB, in-process bus)',
    metrics,
  );
  return summaryLine(
    'standalone',
    {
      events_per_batch: config.eventsPerBatch,
      connections: config.connections,
      duration_s: config.durationSeconds,
    },
    metrics,
  );
}
