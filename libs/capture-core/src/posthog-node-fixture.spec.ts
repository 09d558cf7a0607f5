import { PostHog, type PostHogOptions } from 'posthog-node';

import { parseBatch } from './batch-parser.util';
import { normalizeBatch } from './event-normalizer.util';
import { decodePayload } from './payload-decoder.util';

/**
 * The real SDK's wire format: posthog-node runs in-process with a `fetch` that records the request
 * instead of sending it (no network), and that request goes through the capture core.
 */

const token = 'phc_fixture_project_token';
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface RecordedRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

async function recordSdkRequests(
  options: Partial<PostHogOptions>,
  act: (client: PostHog) => void,
): Promise<RecordedRequest[]> {
  const requests: RecordedRequest[] = [];
  const client = new PostHog(token, {
    host: 'http://capture.test',
    flushAt: 100,
    flushInterval: 0,
    fetchRetryCount: 0,
    ...options,
    fetch: async (url, fetchOptions) => {
      const body = fetchOptions.body;
      requests.push({
        url,
        headers: fetchOptions.headers,
        body:
          typeof body === 'string'
            ? Buffer.from(body)
            : body instanceof Uint8Array
              ? Buffer.from(body)
              : Buffer.from(await (body as Blob).arrayBuffer()),
      });
      return {
        status: 200,
        text: () => Promise.resolve('{"status":1}'),
        json: () => Promise.resolve({ status: 1 }),
      };
    },
  });
  act(client);
  await client.shutdown();
  return requests;
}

function sdkCalls(client: PostHog): void {
  client.capture({
    distinctId: 'user-1',
    event: 'order placed',
    properties: { amount: 42, currency: 'EUR' },
    groups: { company: 'acme' },
    timestamp: new Date('2023-01-01T11:59:55.000Z'),
    uuid: '0189f7c0-8c4a-7b3e-9d2f-0123456789ab',
  });
  client.identify({
    distinctId: 'user-1',
    properties: { email: 'a@example.com', $set_once: { first: 'x' } },
  });
  client.alias({ distinctId: 'user-1', alias: 'anonymous-1' });
  client.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { name: 'Acme' } });
}

function ingestThroughCore(request: RecordedRequest) {
  const url = new URL(request.url);
  const payload = decodePayload({
    body: request.body,
    contentType: request.headers['Content-Type'],
    contentEncoding: request.headers['Content-Encoding'],
    query: Object.fromEntries(url.searchParams),
  });
  const batch = parseBatch(payload, Object.fromEntries(url.searchParams));
  return {
    url,
    payload,
    batch,
    ...normalizeBatch(batch, { teamId: 3, ip: '198.51.100.4', now: new Date() }),
  };
}

describe.each([
  ['gzip (the default)', {}, 'gzip'],
  ['uncompressed', { disableCompression: true }, undefined],
])('posthog-node /batch/ request, %s', (_what, options: Partial<PostHogOptions>, contentEncoding) => {
  let requests: RecordedRequest[];
  beforeAll(async () => {
    requests = await recordSdkRequests(options, sdkCalls);
  });

  it('is one POST /batch/ with the expected headers', () => {
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(new URL(request.url).pathname).toBe('/batch/');
    expect(request.headers['Content-Type']).toBe('application/json');
    expect(request.headers['Content-Encoding']).toBe(contentEncoding);
    if (contentEncoding === 'gzip') expect([...request.body.subarray(0, 3)]).toEqual([0x1f, 0x8b, 0x08]);
  });

  it('decodes to the batch object: api_key, batch, sent_at', () => {
    const { payload, batch } = ingestThroughCore(requests[0]);
    expect(payload).toEqual({
      api_key: token,
      batch: expect.any(Array) as unknown[],
      sent_at: expect.stringMatching(ISO_MS) as string,
    });
    expect(batch.token).toBe(token);
    expect(batch.sentAt).not.toBeNull();
    expect(batch.historicalMigration).toBe(false);
  });

  it('yields one CapturedEvent per SDK call, none dropped', () => {
    const { accepted, dropped } = ingestThroughCore(requests[0]);
    expect(dropped).toEqual([]);
    expect(accepted.map((event) => [event.event, event.distinct_id])).toEqual([
      ['order placed', 'user-1'],
      ['$identify', 'user-1'],
      ['$create_alias', 'user-1'],
      ['$groupidentify', '$company_acme'],
    ]);
    for (const event of accepted) {
      expect(event).toMatchObject({
        token,
        team_id: 3,
        ip: '198.51.100.4',
        sent_at: expect.stringMatching(ISO_MS) as string,
      });
      expect(event.timestamp).toMatch(ISO_MS);
      expect(event).not.toHaveProperty('historical_migration');
    }
  });

  it('keeps the SDK uuid and carries the event as sent in data', () => {
    const { accepted, payload } = ingestThroughCore(requests[0]);
    const [order, identify, alias, groupIdentify] = accepted;
    expect(order.uuid).toBe('0189f7c0-8c4a-7b3e-9d2f-0123456789ab');
    for (const event of accepted.slice(1)) expect(event.uuid).toMatch(UUID_V7);
    expect(JSON.parse(order.data)).toEqual((payload as { batch: unknown[] }).batch[0]);
    expect(JSON.parse(order.data)).toMatchObject({
      properties: {
        amount: 42,
        currency: 'EUR',
        $groups: { company: 'acme' },
        $lib: 'posthog-node',
        $geoip_disable: true,
      },
    });
    expect(JSON.parse(identify.data)).toMatchObject({
      properties: { $set: { email: 'a@example.com' }, $set_once: { first: 'x' } },
    });
    expect(JSON.parse(alias.data)).toMatchObject({
      properties: { distinct_id: 'user-1', alias: 'anonymous-1' },
    });
    expect(JSON.parse(groupIdentify.data)).toMatchObject({
      properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } },
    });
  });

  it('corrects the SDK clock: the timestamp moves by now - sent_at', () => {
    const { accepted, batch } = ingestThroughCore(requests[0]);
    // order placed was stamped 11:59:55 by the caller, long before sent_at: the correction keeps
    // the gap between the two and anchors it on the server's clock.
    const sentAtMs = batch.sentAt!.epochMs;
    const timestampMs = Date.parse(accepted[0].timestamp);
    const nowMs = Date.parse(accepted[0].now);
    expect(timestampMs - nowMs).toBe(Date.parse('2023-01-01T11:59:55.000Z') - sentAtMs);
  });
});

describe('posthog-node with historicalMigration', () => {
  it('marks every event of the batch as historical', async () => {
    const requests = await recordSdkRequests({ historicalMigration: true }, (client) => {
      client.capture({ distinctId: 'user-1', event: 'imported' });
    });
    const { accepted, batch } = ingestThroughCore(requests[0]);
    expect(batch.historicalMigration).toBe(true);
    expect(accepted).toMatchObject([{ event: 'imported', historical_migration: true }]);
  });
});
