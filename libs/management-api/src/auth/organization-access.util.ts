import type {
  MembershipLevel,
  Organization,
  OrganizationMembership,
  PersonalApiKey,
} from '@hogbase/postgres';
import { insufficientLevel, permissionDenied } from '../common/api-error';

/** The key's organization restriction, then the membership level: both 403, after membership (404) was settled. */
export function assertOrganizationAccess(
  apiKey: PersonalApiKey,
  organization: Organization,
  membership: OrganizationMembership,
  level: MembershipLevel | undefined,
): void {
  if (apiKey.scopedOrganizations?.length && !apiKey.scopedOrganizations.includes(organization.id)) {
    throw permissionDenied(
      `API key does not have access to the requested organization: ID ${organization.id}.`,
    );
  }
  if (level !== undefined && membership.level < level) throw insufficientLevel();
}
