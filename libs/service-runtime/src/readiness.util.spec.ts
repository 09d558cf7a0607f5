import { Counter, Registry } from 'prom-client';
import { checkReadiness, combineReadiness, combineServices } from './readiness.util';
import { readinessResponse } from './probe-response.presenter';
import type { RunningService } from './service.types';

describe('checkReadiness', () => {
  it('is ready when every required check passes, whatever the advisory ones say', async () => {
    const readiness = await checkReadiness({
      required: { queue: () => true },
      advisory: { postgres: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')) },
    });
    expect(readiness).toEqual({
      ready: true,
      checks: { queue: true, postgres: 'connect ECONNREFUSED 127.0.0.1:5432' },
    });
  });

  it('is not ready when a required check fails, throws, says why or hangs past the timeout', async () => {
    const readiness = await checkReadiness(
      {
        required: {
          ok: () => Promise.resolve(true),
          refused: () => false,
          reason: () => 'consumer has no partitions',
          throws: () => {
            throw new Error('boom');
          },
          hangs: () => new Promise<boolean>(() => undefined),
        },
      },
      50,
    );
    expect(readiness).toEqual({
      ready: false,
      checks: {
        ok: true,
        refused: false,
        reason: 'consumer has no partitions',
        throws: 'boom',
        hangs: 'no answer within 50 ms',
      },
    });
  });
});

describe('readinessResponse', () => {
  it('answers 200 with the checks when ready', () => {
    expect(readinessResponse({ ready: true, checks: { postgres: true } })).toEqual({
      status: 200,
      body: { status: 'ok', checks: { postgres: true } },
    });
  });

  it('answers 503 with the error body naming the failing checks when not', () => {
    expect(readinessResponse({ ready: false, checks: { postgres: true, queue: 'down' } })).toEqual({
      status: 503,
      body: {
        type: 'server_error',
        code: 'service_unavailable',
        detail: 'Not ready: queue.',
        attr: null,
        checks: { postgres: true, queue: 'down' },
      },
    });
  });
});

describe('combineReadiness and combineServices', () => {
  function service(name: string, ready: boolean, stops: string[]): RunningService {
    const metrics = new Registry();
    new Counter({ name: `${name}_things_total`, help: 'things', registers: [metrics] }).inc();
    return {
      metrics,
      ready: () => Promise.resolve({ ready, checks: { queue: ready || 'down' } }),
      stop: () => {
        stops.push(name);
        return Promise.resolve();
      },
    };
  }

  it('prefixes each check with its service and is ready only when every service is', () => {
    expect(
      combineReadiness({
        capture: { ready: true, checks: { queue: true } },
        ingestion: { ready: false, checks: {} },
      }),
    ).toEqual({ ready: false, checks: { 'capture.queue': true, ingestion: 'not ready' } });
  });

  it('serves every service’s metrics, and stops them in the order given', async () => {
    const stops: string[] = [];
    const combined = combineServices({
      capture: service('capture', true, stops),
      ingestion: service('ingestion', false, stops),
    });
    expect(await combined.ready()).toEqual({
      ready: false,
      checks: { 'capture.queue': true, 'ingestion.queue': 'down' },
    });
    const text = await combined.metrics.metrics();
    expect(text).toContain('capture_things_total 1');
    expect(text).toContain('ingestion_things_total 1');
    await combined.stop();
    expect(stops).toEqual(['capture', 'ingestion']);
  });
});
