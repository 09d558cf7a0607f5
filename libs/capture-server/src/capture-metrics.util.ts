import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** One registry per app instance, so capture can run beside other apps in one process. */
export class CaptureMetrics {
  readonly registry = new Registry();
  readonly events = new Counter({
    name: 'capture_events_total',
    help: 'Events by outcome: accepted, or dropped with the reason',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly requests = new Histogram({
    name: 'capture_request_duration_seconds',
    help: 'Capture request duration by status',
    labelNames: ['status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'capture_' });
  }
}
