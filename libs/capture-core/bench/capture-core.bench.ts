/**
 * Throughput of the capture core alone (decode + parse + normalise, no HTTP, no Kafka) on a
 * posthog-node-shaped 50-event /batch/ body, plain and gzipped.
 *
 *   node -r @swc-node/register libs/capture-core/bench/capture-core.bench.ts
 */
import { gzipSync } from 'node:zlib';

import { decodePayload, normalizeBatch, parseBatch, type RawCaptureRequest } from '../src';

const EVENTS_PER_BATCH = 50;
const ROUNDS = 4_000;

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

function measure(label: string, runOnce: () => number): void {
  for (let round = 0; round < 500; round++) runOnce(); // warm-up
  let events = 0;
  const start = process.hrtime.bigint();
  for (let round = 0; round < ROUNDS; round++) events += runOnce();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const perSecond = Math.round(events / seconds).toLocaleString('en-US');
  const batchMicros = ((seconds / ROUNDS) * 1e6).toFixed(0);
  console.log(`${label}: ${perSecond} events/s (${batchMicros} µs per ${EVENTS_PER_BATCH}-event batch)`);
}

function throughCore(request: RawCaptureRequest): () => number {
  return () => {
    const batch = parseBatch(decodePayload(request), request.query);
    return normalizeBatch(batch, { teamId: 1, ip: '127.0.0.1', now: new Date() }).accepted.length;
  };
}

const body = posthogNodeBody();
const plain = Buffer.from(body);
const gzipped = gzipSync(body);
console.log(`body: ${plain.length} bytes JSON, ${gzipped.length} bytes gzipped`);
measure(
  'ceiling, JSON.parse alone',
  () => (JSON.parse(plain.toString('utf8')) as { batch: unknown[] }).batch.length,
);
measure('capture core, plain JSON', throughCore({ body: plain, contentType: 'application/json', query: {} }));
measure(
  'capture core, gzip',
  throughCore({ body: gzipped, contentType: 'application/json', contentEncoding: 'gzip', query: {} }),
);
