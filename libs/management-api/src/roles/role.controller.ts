import { Controller } from '@nestjs/common';

/** Roles of an organization: being built (no routes yet). */
@Controller('api/organizations/:organization_id/roles')
export class RoleController {}
