import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { ClickHouseConnectionConfig } from '@hogbase/clickhouse';
import type { ManagementConfig } from '@hogbase/config';
import { openDataSource, postgresDataSourceOptions } from '@hogbase/postgres';
import { ActivityModule } from './activity/activity.module';
import { AuthModule } from './auth/auth.module';
import { BatchExportsModule } from './batch-exports/batch-exports.module';
import { BootstrapModule } from './bootstrap/bootstrap.module';
import { HttpErrorFilter } from './common/http-error.filter';
import { ApiValidationPipe } from './common/validation.pipe';
import { CoreModule } from './core.module';
import { DomainsModule } from './domains/domains.module';
import { EventsModule } from './events/events.module';
import { FeatureFlagsModule } from './feature-flags/feature-flags.module';
import { HealthModule } from './health/health.module';
import { InvitesModule } from './invites/invites.module';
import { MembersModule } from './members/members.module';
import { OrganizationsModule } from './organizations/organizations.module';
import { PersistenceModule } from './persistence/persistence.module';
import { PipelineAppsModule } from './plugins/pipeline-apps.module';
import { ProjectSecretApiKeysModule } from './project-secret-api-keys/project-secret-api-keys.module';
import { ProjectsModule } from './projects/projects.module';
import { QueryModule } from './query/query.module';
import { RolesModule } from './roles/roles.module';
import { SchemaModule } from './schema/schema.module';
import { UsersModule } from './users/users.module';

export interface ManagementModuleOptions {
  config: ManagementConfig;
  /** The Postgres URL: the configured one, or the embedded server's. */
  databaseUrl: string;
  /**
   * Where the event listing reads events: a ClickHouse server, or the embedded chDB engine's data
   * path. Opened on the first listing request. Absent in tools that serve no HTTP (the admin CLI).
   */
  clickhouse?: ClickHouseConnectionConfig;
}

@Module({})
export class ManagementModule {
  static forRoot({ config, databaseUrl, clickhouse }: ManagementModuleOptions): DynamicModule {
    const connection = {
      url: databaseUrl,
      poolSize: config.database.poolSize,
      applicationName: 'management',
    };
    return {
      module: ManagementModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => postgresDataSourceOptions(connection),
          // Migrations run before the app serves, under a lock shared with every other process.
          dataSourceFactory: () => openDataSource(connection),
        }),
        CoreModule.forRoot(config, clickhouse ?? null),
        PersistenceModule,
        AuthModule,
        // Express matches routes in the order the features register them: keep this order.
        HealthModule,
        SchemaModule,
        OrganizationsModule,
        ProjectsModule,
        ProjectSecretApiKeysModule,
        MembersModule,
        InvitesModule,
        DomainsModule,
        UsersModule,
        EventsModule,
        QueryModule,
        ActivityModule,
        FeatureFlagsModule,
        RolesModule,
        BatchExportsModule,
        PipelineAppsModule,
        BootstrapModule,
      ],
      providers: [
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }
}
