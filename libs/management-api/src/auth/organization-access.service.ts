import { Injectable } from '@nestjs/common';
import type {
  MembershipLevel,
  Organization,
  OrganizationMembership,
  PersonalApiKey,
} from '@hogbase/postgres';
import { insufficientLevel, permissionDenied } from '../common/api.error';
import { AccessRepository } from './access.repository';

/** What a personal API key may reach in an organization its user belongs to. */
@Injectable()
export class OrganizationAccessService {
  constructor(private readonly access: AccessRepository) {}

  /**
   * SECURITY: a key scoped to organizations reaches only those; a key scoped to projects reaches
   * only the organizations that own one of its projects (otherwise such a key could read, change
   * and delete every other organization of its user). 403, and only after membership (404) was
   * settled, so it says nothing to a non-member.
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

  /** The key's organization and project restrictions, then the membership level: all 403, after membership (404). */
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
