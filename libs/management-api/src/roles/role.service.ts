import { Injectable } from '@nestjs/common';

/** Roles and role memberships: being built. */
@Injectable()
export class RoleService {}
