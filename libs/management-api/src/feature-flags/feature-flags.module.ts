import { Module } from '@nestjs/common';
import { ActivityModule } from '../activity/activity.module';
import { CohortsModule } from '../cohorts/cohorts.module';
import { DashboardsModule } from '../dashboards/dashboards.module';
import { EventsModule } from '../events/events.module';
import { PersonsModule } from '../persons/persons.module';
import { RolesModule } from '../roles/roles.module';
import { FeatureFlagActionsService } from './feature-flag-actions.service';
import { FeatureFlagController } from './feature-flag.controller';
import { FeatureFlagRepository } from './feature-flag.repository';
import { FeatureFlagService } from './feature-flag.service';
import { UsageDashboardService } from './usage-dashboard.service';

/** Feature flags: definitions, edit rights, the actions that evaluate them, their usage dashboards. */
@Module({
  imports: [ActivityModule, CohortsModule, DashboardsModule, EventsModule, PersonsModule, RolesModule],
  controllers: [FeatureFlagController],
  providers: [FeatureFlagRepository, FeatureFlagService, FeatureFlagActionsService, UsageDashboardService],
})
export class FeatureFlagsModule {}
