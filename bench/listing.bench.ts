import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BenchConfig } from './bench.config';
import type { BenchDatabase } from './bench-database.util';
import type { GenerateRequest, ListingTargetMessage } from './listing-target.process';
import {
  median,
  percentile,
  printRoundsTable,
  summaryLine,
  type BenchSummary,
  type Metric,
} from './report.util';

const START_TIMEOUT_MS = 120_000;
/** Events per page of the listing, which every timed query fills at each size. */
const PAGE_SIZE = 100;

/** The listing requests timed at each size, beside the baseline. */
const QUERIES: { key: string; label: string; query: string }[] = [
  { key: 'first_page', label: 'first page (100 newest)', query: '' },
  { key: 'event_filter', label: 'event=signup', query: 'event=signup' },
  {
    key: 'property_filter',
    label: 'properties price = 7 (1 in 1,000)',
    query: `properties=${encodeURIComponent('[{"key":"price","value":"7","operator":"exact"}]')}`,
  },
  {
    key: 'hogql_where',
    label: "where properties.$browser = 'Firefox'",
    query: `where=${encodeURIComponent(`["properties.$browser = 'Firefox'"]`)}`,
  },
  { key: 'next_page', label: "second page (the first page's next)", query: 'next' },
];

interface ListingTarget {
  url: string;
  key: string;
  child: ChildProcess;
}

function waitForMessage<T extends ListingTargetMessage['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<ListingTargetMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the listing target sent no ${type} in time`)),
      timeoutMs,
    );
    const onMessage = (message: ListingTargetMessage) => {
      if (message.type !== type) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message as Extract<ListingTargetMessage, { type: T }>);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the listing target exited (code ${code})`));
    });
  });
}

async function startListingTarget(databaseUrl: string, dataPath: string): Promise<ListingTarget> {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', path.join(__dirname, 'listing-target.process.ts')],
    {
      cwd: path.resolve(__dirname, '..'),
      env: { ...process.env, DATABASE_URL: databaseUrl, BENCH_LISTING_DATA_PATH: dataPath },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const listening = await waitForMessage(child, 'listening', START_TIMEOUT_MS);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    key: listening.key,
    child,
  };
}

async function stopListingTarget(target: ListingTarget): Promise<void> {
  const { child } = target;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** One timed GET; the body is read in full. Fails on anything but a 200. */
async function timedGet(target: ListingTarget, pathAndQuery: string): Promise<{ ms: number; body: string }> {
  const startedAt = performance.now();
  const response = await fetch(`${target.url}${pathAndQuery}`, {
    headers: { Authorization: `Bearer ${target.key}` },
  });
  const body = await response.text();
  const ms = performance.now() - startedAt;
  if (response.status !== 200)
    throw new Error(`GET ${pathAndQuery}: ${response.status} ${body.slice(0, 300)}`);
  return { ms, body };
}

/**
 * The deprecated event listing's latency at each size (`BENCH_LISTING_SIZES`, 1M and 10M events
 * by default, each size a project of its own loaded as `BENCH_LISTING_LOAD` says), request by request, beside an authenticated request that reads
 * Postgres only (`GET /api/projects/:id/`): the ratio is how much ClickHouse adds.
 */
export async function runListingBench(
  config: BenchConfig,
  database: BenchDatabase,
  log: (message: string) => void,
): Promise<BenchSummary[]> {
  const dataPath = await mkdtemp(path.join(tmpdir(), 'hogbase-bench-listing-'));
  const target = await startListingTarget(database.url, dataPath);
  const summaries: BenchSummary[] = [];
  try {
    for (const size of config.listingSizes) {
      const load = config.listingLoad;
      target.child.send({ type: 'generate', total: size, load } satisfies GenerateRequest);
      const generated = await waitForMessage(target.child, 'generated', Math.max(600_000, size / 10));
      const { projectId } = generated;
      const events = `/api/projects/${projectId}/events/`;
      log(
        `listing: a project of ${generated.total.toLocaleString('en-US')} events, loaded ${load} (${generated.seconds.toFixed(0)} s to insert, ${generated.parts} active parts in the table)`,
      );
      const firstPage = JSON.parse((await timedGet(target, events)).body) as { next: string | null };
      const next = firstPage.next ? new URL(firstPage.next) : undefined;
      const paths = new Map<string, string>([
        ['baseline', `/api/projects/${projectId}/`],
        ...QUERIES.map(({ key, query }): [string, string] => [
          key,
          query === 'next'
            ? `${next?.pathname ?? events}${next?.search ?? ''}`
            : `${events}${query ? `?${query}` : ''}`,
        ]),
      ]);
      const rounds = new Map<string, number[]>([...paths.keys()].map((key) => [key, []]));
      const p95 = new Map<string, number[]>([...paths.keys()].map((key) => [key, []]));
      for (let round = 0; round < config.rounds; round += 1) {
        // Rotating order, so drift on a shared machine hits every query alike.
        const keys = [...paths.keys()];
        const order = [...keys.slice(round % keys.length), ...keys.slice(0, round % keys.length)];
        for (const key of order) {
          const times: number[] = [];
          // Warm (plan caches, connections), and proof that the query finds a full page.
          const warm = JSON.parse((await timedGet(target, paths.get(key)!)).body) as { results?: unknown[] };
          if (key !== 'baseline' && warm.results?.length !== PAGE_SIZE) {
            throw new Error(`${key}: ${warm.results?.length ?? 'no'} results, not a page of ${PAGE_SIZE}`);
          }
          for (let request = 0; request < config.listingRequests; request += 1) {
            times.push((await timedGet(target, paths.get(key)!)).ms);
          }
          rounds.get(key)!.push(median(times));
          p95.get(key)!.push(percentile(times, 0.95));
        }
      }
      const baseline = rounds.get('baseline')!;
      const metrics: Metric[] = [
        {
          key: 'baseline_ms',
          label: 'baseline: GET /api/projects/:id/ (Postgres only), median ms',
          rounds: baseline,
          digits: 1,
        },
        ...QUERIES.flatMap(({ key, label }): Metric[] => [
          { key: `${key}_ms`, label: `${label}, median ms`, rounds: rounds.get(key)!, digits: 1 },
          { key: `${key}_p95_ms`, label: `${label}, p95 ms`, rounds: p95.get(key)!, digits: 1 },
          {
            key: `${key}_ratio`,
            label: `${label} / baseline`,
            rounds: rounds.get(key)!.map((ms, index) => ms / baseline[index]),
            digits: 1,
          },
        ]),
      ];
      const title = `Event listing with ${size.toLocaleString('en-US')} events, loaded ${load} (${config.listingRequests} requests per query per round)`;
      printRoundsTable(title, metrics);
      summaries.push(
        summaryLine(
          `listing_${size}_${load}`,
          { events: size, load, requests: config.listingRequests },
          metrics,
        ),
      );
    }
    return summaries;
  } finally {
    await stopListingTarget(target);
    await rm(dataPath, { recursive: true, force: true });
  }
}
