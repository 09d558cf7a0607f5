import { Injectable } from '@nestjs/common';
import { OrganizationResourceAccess, type ResourceAccessLevel } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** The resource name of flags in organization_resource_access. */
export const FEATURE_FLAGS_RESOURCE = 'feature flags';

/** An organization's default access level per resource (PostHog's OrganizationResourceAccess). */
@Injectable()
export class OrganizationResourceAccessRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The organization's level for flags, or null when it set none. */
  async flagsLevel(organizationId: string): Promise<ResourceAccessLevel | null> {
    const row = await this.unitOfWork
      .repository(OrganizationResourceAccess)
      .findOneBy({ organizationId, resource: FEATURE_FLAGS_RESOURCE });
    return row?.accessLevel ?? null;
  }
}
