import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import type { ClickHouseConnectionConfig } from '@hogbase/clickhouse';
import type { ManagementConfig } from '@hogbase/config';
import { registerOwnPort } from '@hogbase/egress';
import type { RunningService } from '@hogbase/service-runtime';
import type { CompanionService } from './health/companion-services.util';
import { HealthController } from './health/health.controller';
import { MetricsService } from './health/metrics.service';
import { createManagementApp } from './management.app';

/** What the management API runs on. */
export interface ManagementEngines {
  /** DATABASE_URL, or the embedded Postgres's. */
  databaseUrl: string;
  /** Where the event listing reads events (opened on the first listing); without it the listing answers 503. */
  clickhouse?: ClickHouseConnectionConfig;
  logger: Logger;
}

export interface ManagementServiceOptions {
  /**
   * Services of the same process that `include` will add once they started (npm start: capture,
   * ingestion): until then this port's /_ready answers 503, so it never says ready before the
   * whole process is.
   */
  companions?: string[];
}

export interface ManagementService extends RunningService {
  app: NestExpressApplication;
  /** `http://host:port` it listens on. */
  url: string;
  /** Makes this port's /_ready and /metrics answer for another service of the process too. */
  include(name: string, service: CompanionService): void;
}

/**
 * The management API, listening on MANAGEMENT_HOST:MANAGEMENT_PORT once Postgres is migrated, with
 * /_health, /_ready (Postgres answers, and the companions are ready) and /metrics.
 */
export async function startManagementService(
  config: ManagementConfig,
  { databaseUrl, clickhouse, logger }: ManagementEngines,
  { companions = [] }: ManagementServiceOptions = {},
): Promise<ManagementService> {
  const app = await createManagementApp({ config, databaseUrl, clickhouse, logger });
  const metrics = app.get(MetricsService);
  metrics.companions.expect(...companions);
  await app.listen(config.port, config.host);
  const { port } = app.getHttpServer().address() as AddressInfo;
  // Outgoing requests for users (app installs, apps' fetch in npm start) never come back here.
  const releasePort = registerOwnPort(port);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const health = app.get(HealthController);
  return {
    app,
    url: `http://${host}:${port}`,
    metrics: metrics.registry,
    ready: () => health.readiness(),
    include: (name, service) => metrics.companions.include(name, service),
    // Stops taking requests, finishes those in flight, closes the Postgres pool.
    stop: async () => {
      await app.close();
      releasePort();
    },
  };
}
