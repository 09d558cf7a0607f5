import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';
import { SplitModeForTest } from './split-mode-test.util';

const METRICS_TOKEN = 'capture-limits-metrics-token-0123456789';

/**
 * npm start's capture (its own thread, the in-process bus, where a 200 means stored) holds events
 * to the bounds PostHog's capture holds them to: 1,000,000 bytes an event, 127 arrays and objects
 * nested, a decompressed body of 100 MB. One event past them used to be taken whole into the
 * embedded Postgres (the apps' destination jobs), or to be answered 200 and then dead-lettered.
 * And with METRICS_TOKEN set, /metrics answers only that token, on both ports.
 */
describe('npm start: capture limits and the metrics token', () => {
  let standalone: StandaloneForTest | undefined;
  let managementUrl: string;
  let captureUrl: string;
  let credentials: InitialCredentials;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-capture-limits-test-', { METRICS_TOKEN });
    ({ managementUrl, captureUrl, credentials } = standalone);
  }, READY_TIMEOUT_MS * 2);

  afterAll(async () => {
    // How the server exits is not what this file tests: stop() kills it and removes DATA_DIR anyway.
    await standalone?.stop().catch(() => undefined);
  });

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${captureUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    });

  async function storedEvents(
    distinctId: string,
  ): Promise<{ event: string; properties: Record<string, unknown> }[]> {
    const listed = await fetch(
      `${managementUrl}/api/projects/${credentials.project_id}/events/?distinct_id=${distinctId}`,
      { headers: { Authorization: `Bearer ${credentials.personal_api_key}` } },
    );
    expect(listed.status).toBe(200);
    return ((await listed.json()) as { results: { event: string; properties: Record<string, unknown> }[] })
      .results;
  }

  it('answers 413 to a 100 KB gzip body holding a 1.5 MB event, on every SDK path', async () => {
    const event = {
      api_key: credentials.project_api_key,
      event: 'oversized',
      distinct_id: 'limits-user',
      properties: { blob: 'ab'.repeat(750_000) },
    };
    const body = gzipSync(JSON.stringify(event));
    expect(body.length).toBeLessThan(200_000);
    for (const path of ['/e/', '/i/v0/e/', '/capture/', '/track/', '/engage/', '/batch/']) {
      const response = await post(path, body, { 'Content-Encoding': 'gzip' });
      expect([path, response.status, await response.json()]).toEqual([
        path,
        413,
        expect.objectContaining({ type: 'validation_error', code: 'event_too_large' }),
      ]);
    }
  });

  it('refuses a whole batch holding one oversized event, storing none of it', async () => {
    const small = (name: string) => ({ event: name, distinct_id: 'batch-user' });
    const response = await post(
      '/batch/',
      JSON.stringify({
        api_key: credentials.project_api_key,
        batch: [
          small('before the oversized one'),
          { ...small('oversized'), properties: { blob: 'x'.repeat(1_100_000) } },
          small('after it'),
        ],
      }),
    );
    expect(response.status).toBe(413);
    // The bus answers 200 once stored: whatever the batch above left would be listed by now.
    const fine = await post(
      '/batch/',
      JSON.stringify({ api_key: credentials.project_api_key, batch: [small('fine')] }),
    );
    expect(fine.status).toBe(200);
    expect((await storedEvents('batch-user')).map((event) => event.event)).toEqual(['fine']);
  });

  it('answers 413 to a body that decompresses past 100 MB', async () => {
    const bomb = gzipSync(Buffer.alloc(120 * 1024 * 1024, 0x20), { level: 9 });
    expect((await post('/batch/', bomb, { 'Content-Encoding': 'gzip' })).status).toBe(413);
  });

  it('stores the deepest nesting capture takes end to end, and answers 400 one level deeper', async () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    // The batch object, `batch`, the event and `properties` enclose the nesting: 4 + 123 = 127.
    const body = (inner: number) =>
      `{"api_key":"${credentials.project_api_key}","batch":[{"event":"deep ${inner}","distinct_id":"deep-user","properties":{"p":${nested(inner)}}}]}`;
    const refused = await post('/batch/', body(124));
    expect([refused.status, await refused.json()]).toEqual([
      400,
      expect.objectContaining({
        code: 'invalid_payload',
        detail: expect.stringContaining('recursion limit') as string,
      }),
    ]);
    expect((await post('/batch/', body(123))).status).toBe(200);

    const stored = await storedEvents('deep-user');
    expect(stored.map((event) => event.event)).toEqual(['deep 123']);
    expect(JSON.stringify(stored[0].properties.p)).toBe(nested(123));
  });

  it('answers /metrics on both ports with the token only, 401 with the error body otherwise', async () => {
    for (const url of [managementUrl, captureUrl]) {
      for (const headers of [{}, { Authorization: 'Bearer not-the-metrics-token' }]) {
        const refused = await fetch(`${url}/metrics`, { headers });
        expect([url, refused.status, refused.headers.get('www-authenticate')]).toEqual([url, 401, 'Bearer']);
        expect(await refused.json()).toEqual({
          type: 'authentication_error',
          code: expect.stringMatching(/^(not_authenticated|authentication_failed)$/) as string,
          detail: expect.any(String) as string,
          attr: null,
        });
      }
      const metrics = await fetch(`${url}/metrics`, {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect([url, metrics.status]).toEqual([url, 200]);
      expect(await metrics.text()).toContain('capture_events_total');
      expect((await fetch(`${url}/_ready`)).status).toBe(200);
    }
  });
});

/**
 * The same bounds in split mode, on capture's CAPTURE_WORKERS processes (Kafka behind them), and
 * METRICS_TOKEN on capture and on ingestion's probe port (the workers' is the same probe server,
 * and cannot run beside ingestion on one chDB directory).
 */
describe('split mode with CAPTURE_WORKERS=2: capture limits and the metrics token', () => {
  let split: SplitModeForTest;

  beforeAll(async () => {
    split = await SplitModeForTest.prepare(
      'hogbase-capture-limits-split-',
      `capture-limits-${randomUUID()}`,
      {
        CAPTURE_WORKERS: '2',
        METRICS_TOKEN,
      },
    );
  });

  afterAll(async () => {
    await split?.cleanUp();
  });

  it(
    'answers 413 and 400 from every worker, and /metrics of every service only with the token',
    async () => {
      const credentials = await split.bootstrapOwner(`owner-${randomUUID()}@limits.test`);
      const [capture, ingestion] = await Promise.all([split.start('capture'), split.start('ingestion')]);
      const oversized = gzipSync(
        JSON.stringify({
          api_key: credentials.project_api_key,
          event: 'oversized',
          distinct_id: 'u',
          properties: { blob: 'ab'.repeat(750_000) },
        }),
      );
      const deep = `{"api_key":"${credentials.project_api_key}","event":"deep","distinct_id":"u","properties":{"p":${'['.repeat(126)}${']'.repeat(126)}}}`;
      // Several requests: node:cluster hands connections to the workers in turn.
      for (let request = 0; request < 4; request++) {
        const tooLarge = await fetch(`${capture.url}/e/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', Connection: 'close' },
          body: oversized,
        });
        expect(tooLarge.status).toBe(413);
        const tooDeep = await fetch(`${capture.url}/capture/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Connection: 'close' },
          body: deep,
        });
        expect(tooDeep.status).toBe(400);
      }

      for (const url of [capture.url, ingestion.url]) {
        const refused = await fetch(`${url}/metrics`);
        expect([url, refused.status]).toEqual([url, 401]);
        expect(await refused.json()).toMatchObject({
          type: 'authentication_error',
          code: 'not_authenticated',
        });
        const metrics = await fetch(`${url}/metrics`, {
          headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
        });
        expect([url, metrics.status]).toEqual([url, 200]);
      }
    },
    READY_TIMEOUT_MS * 4,
  );
});
