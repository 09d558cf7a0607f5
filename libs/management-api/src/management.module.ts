import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { ClickHouseConnectionConfig } from '@hogbase/clickhouse';
import type { ManagementConfig } from '@hogbase/config';
import { openDataSource, postgresDataSourceOptions } from '@hogbase/postgres';
import { AccessGuard } from './auth/access.guard';
import { BootstrapService } from './bootstrap/bootstrap.service';
import { PersonalApiKeyService } from './auth/personal-api-key.service';
import { HttpErrorFilter } from './common/http-error.filter';
import { PostgresAvailability } from './common/postgres-availability.service';
import { ApiValidationPipe } from './common/validation.pipe';
import { DnsChallengeService } from './domains/dns-challenge.service';
import { DomainController } from './domains/domain.controller';
import { DomainService } from './domains/domain.service';
import { EventController } from './events/event.controller';
import { EventPersonsRepository } from './events/event-persons.repository';
import { EventService } from './events/event.service';
import { EVENT_STORE_CONNECTION, EventStore } from './events/event-store.service';
import { ActivityLogService } from './activity/activity-log.service';
import { FeatureFlagActionsService } from './feature-flags/feature-flag-actions.service';
import { FeatureFlagController } from './feature-flags/feature-flag.controller';
import { FeatureFlagService } from './feature-flags/feature-flag.service';
import { FlagPermissionsService } from './feature-flags/flag-permissions.service';
import { UsageDashboardService } from './feature-flags/usage-dashboard.service';
import { FeatureFlagRoleAccessController, RolesController } from './roles/roles.controller';
import { RolesService } from './roles/roles.service';
import { HealthController } from './health/health.controller';
import { MetricsService } from './health/metrics.service';
import { InviteController } from './invites/invite.controller';
import { InviteMailerService } from './invites/invite-mailer.service';
import { InviteService } from './invites/invite.service';
import { MANAGEMENT_CONFIG } from './management-config.token';
import { MemberController } from './members/member.controller';
import { MemberService } from './members/member.service';
import { BatchExportSecrets } from './batch-exports/batch-export-secrets.service';
import { BatchExportController } from './batch-exports/batch-export.controller';
import { BatchExportRunsService } from './batch-exports/batch-export-runs.service';
import { BatchExportService } from './batch-exports/batch-export.service';
import { PipelineAppActionController, PipelineAppController } from './plugins/pipeline-app.controller';
import { PluginActivityService } from './plugins/plugin-activity.service';
import { PluginCatalogService } from './plugins/plugin-catalog.service';
import { PluginConfigController } from './plugins/plugin-config.controller';
import { PluginConfigSecrets } from './plugins/plugin-config-secrets.service';
import { PluginConfigService } from './plugins/plugin-config.service';
import { PluginInstaller } from './plugins/plugin-installer.service';
import { PluginSourceService } from './plugins/plugin-source.service';
import { PluginService } from './plugins/plugin.service';
import { OrganizationController } from './organizations/organization.controller';
import { OrganizationProvisioningService } from './organizations/organization-provisioning.service';
import { OrganizationService } from './organizations/organization.service';
import { OrganizationProjectController, ProjectController } from './projects/project.controller';
import { ProjectService } from './projects/project.service';
import { ProjectSecretApiKeyController } from './project-secret-api-keys/project-secret-api-key.controller';
import { ProjectSecretApiKeyService } from './project-secret-api-keys/project-secret-api-key.service';
import { RouteMatcher } from './routes/route-matcher';
import { OpenApiDocument } from './schema/openapi-document';
import { SchemaController } from './schema/schema.controller';
import { UserController } from './users/user.controller';

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
      ],
      controllers: [
        HealthController,
        SchemaController,
        OrganizationController,
        OrganizationProjectController,
        ProjectController,
        ProjectSecretApiKeyController,
        MemberController,
        InviteController,
        DomainController,
        UserController,
        EventController,
        FeatureFlagController,
        RolesController,
        FeatureFlagRoleAccessController,
        BatchExportController,
        PipelineAppActionController,
        PipelineAppController,
        PluginConfigController,
      ],
      providers: [
        { provide: MANAGEMENT_CONFIG, useValue: config },
        { provide: APP_GUARD, useClass: AccessGuard },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        PostgresAvailability,
        OpenApiDocument,
        RouteMatcher,
        MetricsService,
        PersonalApiKeyService,
        OrganizationProvisioningService,
        BootstrapService,
        OrganizationService,
        ProjectService,
        ProjectSecretApiKeyService,
        MemberService,
        InviteService,
        InviteMailerService,
        DomainService,
        DnsChallengeService,
        { provide: EVENT_STORE_CONNECTION, useValue: clickhouse ?? null },
        EventStore,
        EventPersonsRepository,
        EventService,
        ActivityLogService,
        FlagPermissionsService,
        UsageDashboardService,
        FeatureFlagService,
        FeatureFlagActionsService,
        RolesService,
        BatchExportSecrets,
        BatchExportService,
        BatchExportRunsService,
        PluginInstaller,
        PluginCatalogService,
        PluginActivityService,
        PluginConfigSecrets,
        PluginService,
        PluginSourceService,
        PluginConfigService,
      ],
      exports: [OrganizationProvisioningService, BootstrapService, InviteService],
    };
  }
}
