import { Controller, Get, Header, Headers, HttpCode, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  readinessResponse,
  refuseMetricsRequest,
  type NotReadyBody,
  type Readiness,
  type ReadyBody,
} from '@hogbase/service-runtime';
import type { ManagementConfig } from '@hogbase/config';
import { Access } from '../auth/access.decorator';
import { ApiError } from '../common/api.error';
import { MANAGEMENT_CONFIG } from '../management-config.constants';
import { HealthService } from './health.service';
import { MetricsService } from './metrics.service';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly healthService: HealthService,
    private readonly metrics: MetricsService,
    @Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig,
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
  async metricsText(@Headers('authorization') authorization: string | undefined): Promise<string> {
    const refused = refuseMetricsRequest(authorization, this.config.metricsToken);
    if (refused) throw new ApiError(refused.body.code, refused.body.detail);
    const registries = [this.metrics.registry, ...this.metrics.companions.registries()];
    return (await Promise.all(registries.map((registry) => registry.metrics()))).join('\n');
  }

  /** This app's checks, then each companion's as `<service>.<check>` (the process's probe reads it too). */
  readiness(): Promise<Readiness> {
    return this.healthService.readiness();
  }
}
