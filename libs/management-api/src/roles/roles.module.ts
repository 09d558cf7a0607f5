import { Module } from '@nestjs/common';
import { FlagPermissionsService } from '../feature-flags/flag-permissions.service';
import { FeatureFlagRoleAccessController, RolesController } from './roles.controller';
import { RolesService } from './roles.service';

@Module({
  controllers: [RolesController, FeatureFlagRoleAccessController],
  providers: [RolesService, FlagPermissionsService],
  exports: [FlagPermissionsService],
})
export class RolesModule {}
