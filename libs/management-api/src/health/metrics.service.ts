import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { CompanionServices } from './companion-services.util';

/** One registry per app instance, so several apps in one process (tests, standalone) never collide. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'management_http_request_duration_seconds',
    help: 'Management API request duration by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  /** Services beside this app in the process (npm start): /_ready and /metrics answer for them too. */
  readonly companions = new CompanionServices();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'management_' });
  }
}
