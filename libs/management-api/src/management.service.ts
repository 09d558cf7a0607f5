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

export interface ManagementEngines {
  databaseUrl: string;
  /** Without it the event listing answers 503. */
  clickhouse?: ClickHouseConnectionConfig;
  logger: Logger;
}

export interface ManagementServiceOptions {
  /** Services `include` will add once started: until then /_ready answers 503. */
  companions?: string[];
}

export interface ManagementService extends RunningService {
  app: NestExpressApplication;
  url: string;
  /** Makes this port's /_ready and /metrics answer for another service of the process too. */
  include(name: string, service: CompanionService): void;
}

/** Listens once Postgres is migrated. */
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
    stop: async () => {
      await app.close();
      releasePort();
    },
  };
}
