import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { FlagPermissionsService } from '../feature-flags/flag-permissions.service';
import { FeatureFlagRoleAccessController } from './feature-flag-role-access.controller';
import { FeatureFlagRoleAccessRepository } from './feature-flag-role-access.repository';
import { FeatureFlagRoleAccessService } from './feature-flag-role-access.service';
import { RoleMembershipRepository } from './role-membership.repository';
import { RoleRepository } from './role.repository';
import { RolesController } from './roles.controller';
import { RolesService } from './roles.service';

/** Provides FlagPermissionsService, which reads roles: the flags feature imports this module. */
@Module({
  imports: [AuthModule],
  controllers: [RolesController, FeatureFlagRoleAccessController],
  providers: [
    RoleRepository,
    RoleMembershipRepository,
    FeatureFlagRoleAccessRepository,
    RolesService,
    FeatureFlagRoleAccessService,
    FlagPermissionsService,
  ],
  exports: [FlagPermissionsService, RoleRepository, FeatureFlagRoleAccessRepository],
})
export class RolesModule {}
