import { Module } from '@nestjs/common';
import { ActivityModule } from '../activity/activity.module';
import { EventsModule } from '../events/events.module';
import { RolesModule } from '../roles/roles.module';
import { FeatureFlagActionsService } from './feature-flag-actions.service';
import { FeatureFlagController } from './feature-flag.controller';
import { FeatureFlagService } from './feature-flag.service';
import { UsageDashboardService } from './usage-dashboard.service';

@Module({
  imports: [ActivityModule, EventsModule, RolesModule],
  controllers: [FeatureFlagController],
  providers: [FeatureFlagService, FeatureFlagActionsService, UsageDashboardService],
})
export class FeatureFlagsModule {}
