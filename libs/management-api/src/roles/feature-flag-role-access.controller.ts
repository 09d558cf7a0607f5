import { Controller } from '@nestjs/common';

/** Roles given access to a flag: being built (no routes yet). */
@Controller('api/projects/:project_id/feature_flags/:feature_flag_id/role_access')
export class FeatureFlagRoleAccessController {}
