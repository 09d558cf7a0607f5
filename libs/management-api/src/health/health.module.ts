import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { MetricsService } from './metrics.service';
import { PostgresProbeRepository } from './postgres-probe.repository';

@Module({
  controllers: [HealthController],
  providers: [HealthService, MetricsService, PostgresProbeRepository],
})
export class HealthModule {}
