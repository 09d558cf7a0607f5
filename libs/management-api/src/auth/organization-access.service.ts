import { Injectable } from '@nestjs/common';
import type {
  MembershipLevel,
  Organization,
  OrganizationMembership,
  PersonalApiKey,
} from '@hogbase/postgres';
import { insufficientLevel, permissionDenied } from '../common/api.error';
import { AccessRepository } from './access.repository';

@Injectable()
export class OrganizationAccessService {
  constructor(private readonly access: AccessRepository) {}

  /**
   * SECURITY: an organization-scoped key reaches only those organizations, and a project-scoped key
   * only the organizations owning its projects, else it could
   * change every organization of its user. Call after membership (404), so a non-member learns nothing.
   */
  async assertKeyReachesOrganization(apiKey: PersonalApiKey, organization: Organization): Promise<void> {
    const scopedOrganizations = apiKey.scopedOrganizations ?? [];
    const scopedTeams = apiKey.scopedTeams ?? [];
    const reaches =
      (scopedOrganizations.length === 0 || scopedOrganizations.includes(organization.id)) &&
      (scopedTeams.length === 0 || (await this.access.organizationHasProject(organization.id, scopedTeams)));
    if (!reaches) {
      throw permissionDenied(
        `API key does not have access to the requested organization: ID ${organization.id}.`,
      );
    }
  }

  /** All 403, after membership (404). */
  async assertOrganizationAccess(
    apiKey: PersonalApiKey,
    organization: Organization,
    membership: OrganizationMembership,
    level: MembershipLevel | undefined,
  ): Promise<void> {
    await this.assertKeyReachesOrganization(apiKey, organization);
    if (level !== undefined && membership.level < level) throw insufficientLevel();
  }
}
