import { gunzipSync } from 'node:zlib';
import { PostHog } from 'posthog-node';
import { decodePayload, normalizeBatch, parseBatch } from '@hogbase/capture-core';
import { toQueueMessage, type QueueMessage, type RawEvent } from '@hogbase/event-contract';

/** Exactly as posthog-node sends it (gzip, its headers), recorded, not sent. */
export interface SdkRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Decoded. */
  events: RawEvent[];
}

export interface SdkTraffic {
  token: string;
  requests: number;
  eventsPerBatch: number;
  persons: number;
  /** Same seed, same mix (uuids and timestamps are the SDK's own). */
  seed: number;
}

/** mulberry32, so every run sends the same mix. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const PAGES = [
  '/',
  '/pricing',
  '/docs/getting-started',
  '/blog/launch-week',
  '/products/hoodie',
  '/checkout',
];
const SOURCES = ['newsletter', 'google', 'twitter', 'partner', undefined];
const FEATURES = ['dashboards', 'exports', 'cohorts', 'api-keys', 'sso'];

/** As a backend calling posthog-node would send them. */
function sdkCall(client: PostHog, random: () => number, persons: number): void {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
  const distinctId = `user-${Math.floor(random() * persons)}`;
  const company = `company-${Math.floor(random() * 50)}`;
  const kind = random();
  if (kind < 0.55) {
    const page = pick(PAGES);
    client.capture({
      distinctId,
      event: '$pageview',
      properties: {
        $current_url: `https://shop.example.com${page}?ref=${Math.floor(random() * 1000)}`,
        $pathname: page,
        $referrer: 'https://www.google.com/',
        utm_source: pick(SOURCES),
        plan: pick(['free', 'pro', 'enterprise']),
      },
    });
  } else if (kind < 0.8) {
    const items = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
      sku: `SKU-${Math.floor(random() * 10_000)}`,
      quantity: 1 + Math.floor(random() * 4),
      price: Math.round(random() * 20_000) / 100,
    }));
    client.capture({
      distinctId,
      event: 'order placed',
      properties: {
        order_id: `ord_${Math.floor(random() * 1e9).toString(36)}`,
        amount: items.reduce((sum, item) => sum + item.quantity * item.price, 0),
        currency: 'EUR',
        items,
        coupon: random() < 0.2 ? 'SPRING10' : null,
      },
      groups: { company },
    });
  } else if (kind < 0.95) {
    client.capture({
      distinctId,
      event: 'feature used',
      properties: {
        feature: pick(FEATURES),
        duration_ms: Math.floor(random() * 5_000),
        beta: random() < 0.1,
      },
      groups: { company },
    });
  } else {
    client.identify({
      distinctId,
      properties: {
        email: `${distinctId}@example.com`,
        name: `User ${distinctId.slice(5)}`,
        plan: pick(['free', 'pro', 'enterprise']),
        $set_once: { first_seen_via: pick(SOURCES) ?? 'direct' },
      },
    });
  }
}

export function decodeSdkBody(body: Buffer): { api_key: string; batch: RawEvent[]; sent_at?: string } {
  return JSON.parse(gunzipSync(body).toString('utf8')) as { api_key: string; batch: RawEvent[] };
}

/** Flushing every `eventsPerBatch` calls: one gzipped /batch/ body per flush, the SDK's default. */
export async function recordSdkRequests(traffic: SdkTraffic): Promise<SdkRequest[]> {
  const recorded: SdkRequest[] = [];
  const client = new PostHog(traffic.token, {
    host: 'http://capture.bench',
    flushAt: traffic.eventsPerBatch,
    maxBatchSize: traffic.eventsPerBatch,
    maxQueueSize: traffic.eventsPerBatch * 2,
    flushInterval: 0,
    fetchRetryCount: 0,
    fetch: async (url, options) => {
      const body = options.body;
      const bytes =
        typeof body === 'string'
          ? Buffer.from(body)
          : body instanceof Uint8Array
            ? Buffer.from(body)
            : Buffer.from(await (body as Blob).arrayBuffer());
      recorded.push({
        path: new URL(url).pathname,
        headers: options.headers,
        body: bytes,
        events: decodeSdkBody(bytes).batch,
      });
      return {
        status: 200,
        text: () => Promise.resolve('{"status":1}'),
        json: () => Promise.resolve({ status: 1 }),
      };
    },
  });
  const random = seededRandom(traffic.seed);
  for (let request = 0; request < traffic.requests; request += 1) {
    for (let call = 0; call < traffic.eventsPerBatch; call += 1) sdkCall(client, random, traffic.persons);
    await client.flush();
  }
  await client.shutdown();
  const sizes = new Set(recorded.map((request) => request.events.length));
  if (recorded.length !== traffic.requests || sizes.size !== 1 || !sizes.has(traffic.eventsPerBatch)) {
    throw new Error(
      `posthog-node sent ${recorded.length} requests of ${[...sizes].join('/')} events; ` +
        `expected ${traffic.requests} of ${traffic.eventsPerBatch}`,
    );
  }
  return recorded;
}

export function singleEventBody(token: string, event: RawEvent): string {
  return JSON.stringify({ api_key: token, ...event });
}

/** As capture queues them; with `token`, the messages carry it (ingestion dead-letters a wrong one). */
export function toQueueMessages(
  requests: readonly SdkRequest[],
  teamId: number,
  token?: string,
): QueueMessage[] {
  const now = new Date();
  return requests.flatMap((request) => {
    const query = {};
    const payload = decodePayload({
      body: request.body,
      contentType: request.headers['Content-Type'],
      contentEncoding: request.headers['Content-Encoding'],
      query,
    });
    const { accepted } = normalizeBatch(parseBatch(payload, query), { teamId, ip: '127.0.0.1', now });
    return accepted.map((event) => toQueueMessage(token === undefined ? event : { ...event, token }));
  });
}
