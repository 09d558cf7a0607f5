/**
 * The capture core alone (decode, parse, normalise, queue messages) on a posthog-node /batch/ body:
 *   node -r @swc-node/register libs/capture-core/bench/capture-core.bench.ts \
 *     [--baseline <a copy of an older src/ in the repository>] [--rounds 21] [--batches 500]
 * With a baseline, both run in alternating rounds: their ratio is steadier than absolute figures.
 */
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import { toQueueMessage, type CapturedEvent, type QueueMessage } from '@hogbase/event-contract';

import * as current from '../src';
import type { RawCaptureRequest } from '../src/payload-decoder.util';

const EVENTS_PER_BATCH = 50;

interface Core {
  decodePayload: typeof current.decodePayload;
  parseBatch: typeof current.parseBatch;
  normalizeBatch: typeof current.normalizeBatch;
  /** Absent before the queue messages had their own size check. */
  toQueueMessages?: (events: readonly CapturedEvent[]) => QueueMessage[];
}

function posthogNodeBody(): string {
  const sentAt = new Date();
  const batch = Array.from({ length: EVENTS_PER_BATCH }, (_, index) => ({
    distinct_id: `user-${index % 7}`,
    event: index % 5 === 0 ? '$pageview' : 'order placed',
    properties: {
      $current_url: `https://shop.example.com/products/${index}?utm_source=newsletter`,
      amount: index * 3.5,
      currency: 'EUR',
      $groups: { company: 'acme' },
      $lib: 'posthog-node',
      $lib_version: '5.70.0',
      $is_server: true,
      $geoip_disable: true,
    },
    timestamp: new Date(sentAt.getTime() - index * 10).toISOString(),
    uuid: '0189f7c0-8c4a-7b3e-9d2f-' + String(index).padStart(12, '0'),
  }));
  return JSON.stringify({ api_key: 'phc_bench_project_token', batch, sent_at: sentAt.toISOString() });
}

/** CPU microseconds per batch: CPU, not wall time, which other processes stretch far more. */
function round(runOnce: () => number, batches: number): number {
  const start = process.cpuUsage();
  let events = 0;
  for (let batch = 0; batch < batches; batch++) events += runOnce();
  if (events !== batches * EVENTS_PER_BATCH) throw new Error(`${events} events accepted`);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / batches;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function throughCore(core: Core, request: RawCaptureRequest): () => number {
  const toMessages =
    core.toQueueMessages ?? ((events: readonly CapturedEvent[]) => events.map(toQueueMessage));
  return () => {
    const batch = core.parseBatch(core.decodePayload(request), request.query);
    const { accepted } = core.normalizeBatch(batch, { teamId: 1, ip: '127.0.0.1', now: new Date() });
    return toMessages(accepted).length;
  };
}

function report(label: string, micros: number[], listRounds: boolean): string {
  const perSecond = Math.round((EVENTS_PER_BATCH / median(micros)) * 1e6).toLocaleString('en-US');
  const perThousand = ((median(micros) / EVENTS_PER_BATCH) * 1_000) / 1e3;
  return `${label}: median ${median(micros).toFixed(1)} µs of CPU per ${EVENTS_PER_BATCH}-event batch, ${perThousand.toFixed(2)} ms per 1,000 events, ${perSecond} events/s${listRounds ? ` (rounds: ${micros.map((value) => value.toFixed(0)).join(' ')})` : ''}`;
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

async function main(): Promise<void> {
  const body = posthogNodeBody();
  const requests: [string, RawCaptureRequest][] = [
    ['plain JSON', { body: Buffer.from(body), contentType: 'application/json', query: {} }],
    ['gzip', { body: gzipSync(body), contentType: 'application/json', contentEncoding: 'gzip', query: {} }],
  ];
  const baselineDir = argument('--baseline');
  const cores: [string, Core][] = [['current', current]];
  if (baselineDir) {
    cores.push(['baseline', (await import(path.resolve(baselineDir, 'index.ts'))) as Core]);
  }
  const rounds = Number(argument('--rounds') ?? 21);
  const batches = Number(argument('--batches') ?? 500);
  console.log(`body: ${requests[0][1].body.length} bytes JSON, ${requests[1][1].body.length} bytes gzipped`);

  for (const [label, request] of requests) {
    const entries = cores.map(([name, core]) => ({
      name,
      run: throughCore(core, request),
      micros: [] as number[],
    }));
    if (label === 'plain JSON') {
      const parseAlone = () =>
        (JSON.parse(request.body.toString('utf8')) as { batch: unknown[] }).batch.length;
      entries.push({ name: 'ceiling, JSON.parse alone', run: parseAlone, micros: [] });
    }
    for (const entry of entries) round(entry.run, 500); // warm-up
    for (let index = 0; index < rounds; index++) {
      // Rotating order, so that drift hits every path alike.
      for (let offset = 0; offset < entries.length; offset++) {
        const entry = entries[(index + offset) % entries.length];
        entry.micros.push(round(entry.run, batches));
      }
    }
    console.log(`capture core, ${label}`);
    for (const entry of entries) console.log(`  ${report(entry.name, entry.micros, rounds <= 40)}`);
    const [now, before] = ['current', 'baseline'].map((name) => entries.find((entry) => entry.name === name));
    if (now && before) {
      const ratios = now.micros.map((micros, index) => micros / before.micros[index]);
      console.log(
        `  current / baseline, CPU per batch: ${(median(now.micros) / median(before.micros)).toFixed(3)} (ratio of the medians), ${median(ratios).toFixed(3)} (median of the ${rounds} rounds' ratios)`,
      );
    }
  }
}

void main();
