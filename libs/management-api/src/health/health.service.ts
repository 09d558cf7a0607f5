import { Injectable } from '@nestjs/common';
import { checkReadiness, combineReadiness, type Readiness } from '@hogbase/service-runtime';
import { PostgresAvailability } from '../common/postgres-availability.service';
import { PostgresProbeRepository } from '../common/postgres-probe.repository';
import { isPostgresUnavailable } from '../common/postgres-unavailable.util';
import { MetricsService } from './metrics.service';

@Injectable()
export class HealthService {
  constructor(
    private readonly postgresProbe: PostgresProbeRepository,
    private readonly metrics: MetricsService,
    private readonly postgres: PostgresAvailability,
  ) {}

  /** This app's checks, then each companion's as `<service>.<check>`. */
  async readiness(): Promise<Readiness> {
    const [own, companions] = await Promise.all([
      checkReadiness({
        required: {
          postgres: async () => {
            try {
              await this.postgresProbe.ping();
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
