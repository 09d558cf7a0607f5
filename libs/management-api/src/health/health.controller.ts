import { Controller, Get, Header, HttpCode, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import { DataSource } from 'typeorm';
import {
  checkReadiness,
  combineReadiness,
  readinessResponse,
  refuseMetricsRequest,
  type NotReadyBody,
  type Readiness,
  type ReadyBody,
} from '@hogbase/service-runtime';
import type { ManagementConfig } from '@hogbase/config';
import { Access } from '../auth/access.decorator';
import { ApiError } from '../common/api-error';
import { PostgresAvailability } from '../common/postgres-availability.service';
import { isPostgresUnavailable } from '../common/postgres-unavailable.util';
import { MANAGEMENT_CONFIG } from '../management-config.token';
import { MetricsService } from './metrics.service';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
    @Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig,
    private readonly postgres: PostgresAvailability,
  ) {}

  /** Alive: the process serves HTTP. */
  @Get('_health')
  @HttpCode(200)
  @Access({ scope: 'public' })
  health() {
    return { status: 'ok' };
  }

  /** Ready: Postgres answers (and, in npm start, capture and ingestion are ready): 200, else 503 with the checks. */
  @Get('_ready')
  @Access({ scope: 'public' })
  async ready(@Res({ passthrough: true }) response: Response): Promise<ReadyBody | NotReadyBody> {
    const { status, body } = readinessResponse(await this.readiness());
    response.status(status).setHeader('Cache-Control', 'no-store');
    return body;
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  // Public to the access guard (no personal API key): METRICS_TOKEN, when set, is checked here.
  @Access({ scope: 'public' })
  async metricsText(@Req() request: Request): Promise<string> {
    const refused = refuseMetricsRequest(request.headers.authorization, this.config.metricsToken);
    if (refused) throw new ApiError(refused.body.code, refused.body.detail);
    const registries = [this.metrics.registry, ...this.metrics.companions.registries()];
    return (await Promise.all(registries.map((registry) => registry.metrics()))).join('\n');
  }

  /** This app's checks, then each companion's as `<service>.<check>`. */
  async readiness(): Promise<Readiness> {
    const [own, companions] = await Promise.all([
      checkReadiness({
        required: {
          postgres: async () => {
            try {
              await this.dataSource.query('SELECT 1');
            } catch (error) {
              // The probe sees an outage start (and end) even while no request comes.
              if (isPostgresUnavailable(error)) this.postgres.failed(error);
              throw error;
            }
            this.postgres.answered();
            return true;
          },
        },
      }),
      this.metrics.companions.readiness(),
    ]);
    const others = combineReadiness(companions);
    return { ready: own.ready && others.ready, checks: { ...own.checks, ...others.checks } };
  }
}
