import { Controller, Get, Header, HttpCode, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import {
  checkReadiness,
  combineReadiness,
  readinessResponse,
  type NotReadyBody,
  type Readiness,
  type ReadyBody,
} from '@hogbase/service-runtime';
import { Access } from '../auth/access.decorator';
import { MetricsService } from './metrics.service';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
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
  @Access({ scope: 'public' })
  async metricsText(): Promise<string> {
    const registries = [this.metrics.registry, ...this.metrics.companions.registries()];
    return (await Promise.all(registries.map((registry) => registry.metrics()))).join('\n');
  }

  /** This app's checks, then each companion's as `<service>.<check>`. */
  async readiness(): Promise<Readiness> {
    const [own, companions] = await Promise.all([
      checkReadiness({
        required: {
          postgres: async () => {
            await this.dataSource.query('SELECT 1');
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
