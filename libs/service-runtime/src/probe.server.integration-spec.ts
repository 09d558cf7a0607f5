import { Counter, Registry } from 'prom-client';
import { startProbeServer, type ProbeServer } from './probe.server';
import type { Readiness } from './service.types';

describe('startProbeServer', () => {
  const metrics = new Registry();
  const events = new Counter({ name: 'probe_test_events_total', help: 'events', registers: [metrics] });
  let readiness: Readiness | Error = { ready: true, checks: { queue: true } };
  const logged: { level: string; message: string; object: object }[] = [];
  let server: ProbeServer;

  beforeAll(async () => {
    server = await startProbeServer(
      {
        metrics,
        ready: () => (readiness instanceof Error ? Promise.reject(readiness) : Promise.resolve(readiness)),
      },
      {
        host: '127.0.0.1',
        port: 0,
        logger: {
          info: (object, message) => logged.push({ level: 'info', message, object }),
          warn: (object, message) => logged.push({ level: 'warn', message, object }),
        },
      },
    );
  });

  afterAll(() => server.close());

  it('answers /_health with 200 whatever the readiness', async () => {
    readiness = { ready: false, checks: { queue: 'down' } };
    const response = await fetch(`${server.url}/_health`);
    expect([response.status, await response.json()]).toEqual([200, { status: 'ok' }]);
  });

  it('answers /_ready with 200 and the checks when ready', async () => {
    readiness = { ready: true, checks: { queue: true, postgres: 'connection refused' } };
    const response = await fetch(`${server.url}/_ready`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect([response.status, await response.json()]).toEqual([
      200,
      { status: 'ok', checks: { queue: true, postgres: 'connection refused' } },
    ]);
  });

  it('answers /_ready with 503 and the failing checks when not ready', async () => {
    readiness = { ready: false, checks: { postgres: true, queue: 'consumer has no partitions' } };
    const response = await fetch(`${server.url}/_ready`);
    expect([response.status, await response.json()]).toEqual([
      503,
      {
        type: 'server_error',
        code: 'service_unavailable',
        detail: 'Not ready: queue.',
        attr: null,
        checks: { postgres: true, queue: 'consumer has no partitions' },
      },
    ]);
  });

  it('answers /_ready with 503, not 500, when the readiness itself throws', async () => {
    readiness = new Error('pool is closed');
    const response = await fetch(`${server.url}/_ready/`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ checks: { readiness: 'pool is closed' } });
  });

  it('logs readiness once per change, not once per probe', async () => {
    logged.length = 0;
    readiness = { ready: true, checks: { queue: true } };
    await fetch(`${server.url}/_ready`);
    readiness = { ready: false, checks: { queue: 'down' } };
    for (let probe = 0; probe < 3; probe++) await fetch(`${server.url}/_ready`);
    readiness = { ready: true, checks: { queue: true } };
    for (let probe = 0; probe < 3; probe++) await fetch(`${server.url}/_ready`);
    expect(logged.map(({ level, message }) => `${level} ${message}`)).toEqual([
      'info ready',
      'warn not ready',
      'info ready',
    ]);
  });

  it('serves the service’s metrics in the Prometheus text format', async () => {
    events.inc(3);
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(await response.text()).toContain('probe_test_events_total 3');
  });

  it('answers 404 with the API error body elsewhere, and 405 to a write on a probe', async () => {
    const missing = await fetch(`${server.url}/api/projects/`);
    expect([missing.status, await missing.json()]).toEqual([
      404,
      { type: 'invalid_request', code: 'not_found', detail: 'Endpoint not found.', attr: null },
    ]);
    expect((await fetch(`${server.url}/_ready`, { method: 'POST' })).status).toBe(405);
  });

  it('refuses to start on a port that is taken, naming it', async () => {
    await expect(
      startProbeServer(
        { metrics, ready: () => Promise.resolve(readiness as Readiness) },
        {
          host: '127.0.0.1',
          port: server.port,
        },
      ),
    ).rejects.toThrow(`cannot serve probes on 127.0.0.1:${server.port}`);
  });
});

describe('startProbeServer with METRICS_TOKEN', () => {
  const token = 'metrics-token-for-the-test-0123456789';
  let server: ProbeServer;

  beforeAll(async () => {
    const metrics = new Registry();
    new Counter({ name: 'probe_token_test_total', help: 'events', registers: [metrics] });
    server = await startProbeServer(
      { metrics, ready: () => Promise.resolve({ ready: true, checks: {} }) },
      { host: '127.0.0.1', port: 0, metricsToken: token },
    );
  });

  afterAll(() => server.close());

  it('answers /metrics 401 with the error body without the token or with another one', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-the-token' }, { Authorization: token }]) {
      const response = await fetch(`${server.url}/metrics`, { headers });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect([response.status, await response.json()]).toEqual([
        401,
        expect.objectContaining({ type: 'authentication_error', attr: null }),
      ]);
    }
  });

  it('answers /metrics with the token, and /_health and /_ready without it', async () => {
    const response = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    expect([response.status, await response.text()]).toEqual([
      200,
      expect.stringContaining('probe_token_test_total'),
    ]);
    expect((await fetch(`${server.url}/_health`)).status).toBe(200);
    expect((await fetch(`${server.url}/_ready`)).status).toBe(200);
  });
});
