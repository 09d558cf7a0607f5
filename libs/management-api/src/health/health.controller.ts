import { Controller, Get, Header, HttpCode } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Access } from '../auth/access.decorator';
import { ApiError } from '../common/api-error';
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

  /** Ready: Postgres answers, so requests will be served. */
  @Get('_ready')
  @Access({ scope: 'public' })
  async ready() {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new ApiError('service_unavailable', 'Postgres does not answer.');
    }
    return { status: 'ok', postgres: 'up' };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  @Access({ scope: 'public' })
  async metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
