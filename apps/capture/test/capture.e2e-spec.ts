import { gzipSync } from 'node:zlib';
import { compressToBase64 } from 'lz-string';
import { PostHog } from 'posthog-node';
import { HISTORICAL_EVENTS_TOPIC, EVENTS_TOPIC } from '@hogbase/event-contract';
import { CaptureTestApp, PROJECT_TOKEN, startCaptureTestApp } from './capture-test-app';

describe('capture over HTTP', () => {
  let capture: CaptureTestApp;

  beforeAll(async () => {
    capture = await startCaptureTestApp();
  });

  afterAll(async () => {
    await capture?.close();
  });

  beforeEach(() => {
    capture.received.length = 0;
    capture.failWrites(false);
  });

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${capture.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    });

  const event = (name: string, distinctId: string, extra: Record<string, unknown> = {}) => ({
    event: name,
    distinct_id: distinctId,
    properties: { $lib: 'test' },
    ...extra,
  });

  const receivedNames = () => capture.received.map(({ event: captured }) => captured.event);

  it('stores a /capture/ event with the project, a UUIDv7 and the partition key, answering {status: 1}', async () => {
    const response = await post(
      '/capture/',
      JSON.stringify({ api_key: PROJECT_TOKEN, ...event('signed up', 'user-1') }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 1 });
    expect(capture.received).toHaveLength(1);
    const [{ topic, key, event: captured }] = capture.received;
    expect(topic).toBe(EVENTS_TOPIC);
    expect(key).toBe(`${capture.teamId}:user-1`);
    expect(captured).toMatchObject({
      team_id: capture.teamId,
      event: 'signed up',
      distinct_id: 'user-1',
      token: PROJECT_TOKEN,
    });
    expect(captured.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('keeps the SDK uuid and ingests a /batch/ with distinct_id inside properties', async () => {
    const uuid = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    const response = await post(
      '/batch/',
      JSON.stringify({
        api_key: PROJECT_TOKEN,
        batch: [
          { event: 'a', uuid, properties: { distinct_id: 'in-properties' } },
          { event: 'b', distinct_id: 'top-level' },
        ],
      }),
    );
    expect(response.status).toBe(200);
    expect(capture.received.map(({ event: captured }) => [captured.event, captured.distinct_id])).toEqual([
      ['a', 'in-properties'],
      ['b', 'top-level'],
    ]);
    expect(capture.received[0].event.uuid).toBe(uuid);
  });

  it.each([
    ['/e/', {}, (body: string) => gzipSync(body), { 'Content-Encoding': 'gzip' }],
    ['/e', { compression: 'gzip-js' }, (body: string) => gzipSync(body), { 'Content-Type': 'text/plain' }],
    ['/i/v0/e/', {}, (body: string) => gzipSync(body), { 'Content-Type': 'text/plain' }],
    ['/track/', {}, (body: string) => Buffer.from(body).toString('base64'), {}],
    [
      '/e/',
      { compression: 'lz64' },
      (body: string) => compressToBase64(body),
      { 'Content-Type': 'application/x-www-form-urlencoded' },
    ],
  ] as const)('decodes %s with %j', async (path, query, encode, headers) => {
    const body = JSON.stringify([{ ...event('encoded', 'user-2'), api_key: PROJECT_TOKEN }]);
    const search = new URLSearchParams(query as Record<string, string>).toString();
    const encoded = encode(body);
    const payload =
      (headers as Record<string, string>)['Content-Type'] === 'application/x-www-form-urlencoded'
        ? `data=${encodeURIComponent(String(encoded))}`
        : encoded;
    const response = await post(`${path}${search ? `?${search}` : ''}`, payload, headers);
    expect(response.status).toBe(200);
    expect(receivedNames()).toEqual(['encoded']);
  });

  it('takes a form body with data= and a legacy GET with ?data=', async () => {
    const data = Buffer.from(JSON.stringify({ ...event('form', 'user-3'), api_key: PROJECT_TOKEN })).toString(
      'base64',
    );
    const form = await post('/e/', `data=${encodeURIComponent(data)}`, {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(200);
    const get = await fetch(`${capture.baseUrl}/e/?data=${encodeURIComponent(data)}`);
    expect(get.status).toBe(200);
    expect(receivedNames()).toEqual(['form', 'form']);
  });

  it('answers 405 with Allow: POST to any other method on /capture/ and /batch/, storing nothing (POST-only in the spec)', async () => {
    const data = Buffer.from(
      JSON.stringify({ ...event('by get', 'user-405'), api_key: PROJECT_TOKEN }),
    ).toString('base64');
    for (const path of ['/capture/', '/batch/', '/capture', '/batch']) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const response = await fetch(`${capture.baseUrl}${path}?data=${encodeURIComponent(data)}`, {
          method,
          headers: { Origin: 'https://shop.example' },
          ...(method === 'GET' ? {} : { body: JSON.stringify({ api_key: PROJECT_TOKEN, batch: [] }) }),
        });
        expect([method, path, response.status, response.headers.get('allow')]).toEqual([
          method,
          path,
          405,
          'POST',
        ]);
        expect(await response.json()).toEqual({
          type: 'invalid_request',
          code: 'method_not_allowed',
          detail: `Method "${method}" not allowed.`,
          attr: null,
        });
        // A page can read why, as it reads any other capture answer.
        expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      }
      const head = await fetch(`${capture.baseUrl}${path}?data=${encodeURIComponent(data)}`, {
        method: 'HEAD',
      });
      expect([path, head.status, head.headers.get('allow')]).toEqual([path, 405, 'POST']);
    }
    expect(capture.received).toHaveLength(0);
  });

  it("keeps the SDKs' own paths on GET ?data= as well as POST", async () => {
    for (const path of ['/e/', '/i/v0/e/', '/track/', '/engage/']) {
      const data = Buffer.from(
        JSON.stringify({ ...event(path, 'user-get'), api_key: PROJECT_TOKEN }),
      ).toString('base64');
      const response = await fetch(`${capture.baseUrl}${path}?data=${encodeURIComponent(data)}`);
      expect([path, response.status]).toEqual([path, 200]);
    }
    expect(receivedNames()).toEqual(['/e/', '/i/v0/e/', '/track/', '/engage/']);
  });

  it('answers 200 and stores the rest of the batch when events lack a name or a distinct id', async () => {
    const response = await post(
      '/batch/',
      JSON.stringify({
        api_key: PROJECT_TOKEN,
        batch: [
          { distinct_id: 'no-name' },
          { event: 'no distinct id' },
          { event: 'empty distinct id', distinct_id: '' },
          event('kept', 'user-4'),
        ],
      }),
    );
    expect(response.status).toBe(200);
    expect(receivedNames()).toEqual(['kept']);
  });

  it('routes historical migration batches to their own topic', async () => {
    await post(
      '/batch/',
      JSON.stringify({ api_key: PROJECT_TOKEN, historical_migration: true, batch: [event('old', 'user-5')] }),
    );
    expect(capture.received.map(({ topic }) => topic)).toEqual([HISTORICAL_EVENTS_TOPIC]);
  });

  it('corrects the clock skew from sent_at', async () => {
    const now = Date.now();
    const sentAt = new Date(now + 60 * 60 * 1000).toISOString();
    const timestamp = new Date(now + 60 * 60 * 1000 - 5_000).toISOString();
    await post(
      '/batch/',
      JSON.stringify({
        api_key: PROJECT_TOKEN,
        sent_at: sentAt,
        batch: [event('skewed', 'u', { timestamp })],
      }),
    );
    const stored = Date.parse(capture.received[0].event.timestamp);
    expect(Math.abs(stored - (now - 5_000))).toBeLessThan(2_000);
  });

  it('answers 401 with the error body to an unknown token, a missing one and a personal key', async () => {
    for (const apiKey of ['phc_unknown', undefined, 'phx_personal']) {
      const response = await post('/capture/', JSON.stringify({ api_key: apiKey, ...event('x', 'u') }));
      const body = (await response.json()) as Record<string, unknown>;
      expect({ apiKey, status: response.status, type: body.type }).toEqual({
        apiKey,
        status: 401,
        type: 'authentication_error',
      });
      expect(Object.keys(body).sort()).toEqual(['attr', 'code', 'detail', 'type']);
    }
    expect(capture.received).toHaveLength(0);
  });

  it('answers 413 past the body limits: 2 MB on single-event paths, 20 MB on /batch/', async () => {
    const big = JSON.stringify({
      api_key: PROJECT_TOKEN,
      ...event('big', 'u', { properties: { blob: 'x'.repeat(3 * 1024 * 1024) } }),
    });
    expect((await post('/e/', big)).status).toBe(413);
    expect((await post('/batch/', Buffer.alloc(21 * 1024 * 1024, 32))).status).toBe(413);
    expect(capture.received).toHaveLength(0);
  });

  it('answers 413 to an event past 1 MB on every SDK path, however small its gzip body', async () => {
    // ~100 KB on the wire (under every body limit), a 1.5 MB event once inflated.
    const oversized = event('oversized', 'u', { properties: { blob: 'ab'.repeat(750_000) } });
    const single = gzipSync(JSON.stringify({ api_key: PROJECT_TOKEN, ...oversized }));
    expect(single.length).toBeLessThan(200_000);
    for (const path of ['/e/', '/i/v0/e/', '/capture/', '/track/', '/engage/', '/batch/']) {
      const response = await post(path, single, { 'Content-Encoding': 'gzip' });
      expect([path, response.status, await response.json()]).toEqual([
        path,
        413,
        expect.objectContaining({ type: 'validation_error', code: 'event_too_large' }),
      ]);
    }
    expect(capture.received).toHaveLength(0);
  });

  it('refuses a whole batch holding one event past 1 MB, as PostHog, and takes large events under it', async () => {
    const under = (name: string) => event(name, 'u', { properties: { blob: 'x'.repeat(900_000) } });
    const oversized = event('oversized', 'u', { properties: { blob: 'x'.repeat(1_000_000) } });
    const refused = await post(
      '/batch/',
      JSON.stringify({ api_key: PROJECT_TOKEN, batch: [under('before'), oversized, under('after')] }),
    );
    expect([refused.status, await refused.json()]).toEqual([
      413,
      expect.objectContaining({
        code: 'event_too_large',
        detail: expect.stringContaining('1000000') as string,
      }),
    ]);
    expect(capture.received).toHaveLength(0);

    const taken = await post(
      '/batch/',
      JSON.stringify({ api_key: PROJECT_TOKEN, batch: [under('first'), under('second')] }),
    );
    expect(taken.status).toBe(200);
    expect(receivedNames()).toEqual(['first', 'second']);
  });

  it('answers 400 to nesting past 127 arrays and objects, as PostHog, and takes 127', async () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    // The body's own object, then `properties`, then the nesting inside it.
    const body = (inner: number) =>
      `{"api_key":"${PROJECT_TOKEN}","event":"deep ${inner}","distinct_id":"u","properties":{"p":${nested(inner)}}}`;
    const refused = await post('/capture/', body(126));
    expect([refused.status, await refused.json()]).toEqual([
      400,
      expect.objectContaining({
        code: 'invalid_payload',
        detail: expect.stringContaining('recursion limit exceeded') as string,
      }),
    ]);
    expect((await post('/capture/', body(5_000))).status).toBe(400);
    expect(capture.received).toHaveLength(0);
    expect((await post('/capture/', body(125))).status).toBe(200);
    expect(receivedNames()).toEqual(['deep 125']);
  });

  it('answers 413 to a gzip bomb and 400 to an undecodable body, storing nothing', async () => {
    const bomb = gzipSync(Buffer.alloc(200 * 1024 * 1024, 0x20), { level: 9 });
    expect((await post('/batch/', bomb, { 'Content-Encoding': 'gzip' })).status).toBe(413);
    for (const body of ['{"api_key": "phc_', '\u0000\u0001', 'null', '[]', '{"batch": 5, "api_key": "x"}']) {
      const response = await post('/batch/', body);
      expect({ body, client: response.status >= 400 && response.status < 500 }).toEqual({
        body,
        client: true,
      });
    }
    expect(capture.received).toHaveLength(0);
  });

  it('answers 503 when the queue cannot store the events, so SDKs retry', async () => {
    capture.failWrites(true);
    const response = await post(
      '/capture/',
      JSON.stringify({ api_key: PROJECT_TOKEN, ...event('lost?', 'u') }),
    );
    expect(response.status).toBe(503);
    capture.failWrites(false);
    expect(capture.received).toHaveLength(0);
  });

  it('answers CORS preflights for browsers, mirroring the origin', async () => {
    const response = await fetch(`${capture.baseUrl}/e/`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it('answers the browser paths with the origin mirrored and credentials allowed, as posthog-js XHR needs', async () => {
    for (const path of ['/e/', '/i/v0/e/', '/batch/', '/capture/']) {
      const response = await fetch(`${capture.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' },
      });
      expect([path, response.status]).toEqual([path, 200]);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(response.headers.get('vary')).toContain('Origin');
    }
  });

  it('answers no CORS on server-side paths: local-evaluation definitions, health, metrics, unknown paths', async () => {
    for (const path of [
      '/flags/definitions',
      '/api/feature_flag/local_evaluation',
      '/_ready',
      '/metrics',
      '/nope',
    ]) {
      const preflight = await fetch(`${capture.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://evil.example',
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'authorization',
        },
      });
      expect([path, preflight.status < 300]).toEqual([path, false]);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      const read = await fetch(`${capture.baseUrl}${path}`, { headers: { Origin: 'https://evil.example' } });
      expect(read.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('serves health, readiness and metrics', async () => {
    expect((await fetch(`${capture.baseUrl}/_health`)).status).toBe(200);
    expect((await fetch(`${capture.baseUrl}/_ready`)).status).toBe(200);
    expect(await (await fetch(`${capture.baseUrl}/metrics`)).text()).toContain('capture_events_total');
  });

  it('takes what the real posthog-node SDK sends', async () => {
    const client = new PostHog(PROJECT_TOKEN, { host: capture.baseUrl, flushAt: 1, flushInterval: 0 });
    client.capture({ distinctId: 'sdk-user', event: 'sdk event', properties: { plan: 'pro' } });
    client.identify({ distinctId: 'sdk-user', properties: { email: 'sdk@example.com' } });
    client.alias({ distinctId: 'sdk-user', alias: 'sdk-alias' });
    client.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { name: 'Acme' } });
    await client.shutdown();
    expect(receivedNames().sort()).toEqual(['$create_alias', '$groupidentify', '$identify', 'sdk event']);
    const sdkEvent = capture.received.find(({ event: captured }) => captured.event === 'sdk event')!.event;
    expect(JSON.parse(sdkEvent.data).properties).toMatchObject({ plan: 'pro', $lib: 'posthog-node' });
  });
});
