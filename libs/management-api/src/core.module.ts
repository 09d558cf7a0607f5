import { DynamicModule, Global, Module } from '@nestjs/common';
import type { ClickHouseConnectionConfig } from '@hogbase/clickhouse';
import type { ManagementConfig } from '@hogbase/config';
import { PostgresAvailability } from './common/postgres-availability.service';
import { PostgresProbeRepository } from './common/postgres-probe.repository';
import { EVENT_STORE_CONNECTION } from './events/event-store.service';
import { MANAGEMENT_CONFIG } from './management-config.constants';
import { RouteMatcher } from './routes/route-matcher.service';

/** What every feature may inject: the app's configuration and connections, whether Postgres answers, and the route table. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: ManagementConfig, clickhouse: ClickHouseConnectionConfig | null): DynamicModule {
    const providers = [
      { provide: MANAGEMENT_CONFIG, useValue: config },
      { provide: EVENT_STORE_CONNECTION, useValue: clickhouse },
      PostgresProbeRepository,
      PostgresAvailability,
      RouteMatcher,
    ];
    return { module: CoreModule, providers, exports: providers };
  }
}
