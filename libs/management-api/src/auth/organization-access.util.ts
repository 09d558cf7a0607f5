import { In, type EntityManager } from 'typeorm';
import {
  type MembershipLevel,
  type Organization,
  type OrganizationMembership,
  type PersonalApiKey,
  Team,
} from '@hogbase/postgres';
import { insufficientLevel, permissionDenied } from '../common/api-error';
import type { AccessRule, KeyRestriction } from './access.decorator';

/** The restrictions a key carries; none for a key that reaches every organization of its user. */
export function keyRestrictions(apiKey: PersonalApiKey): KeyRestriction[] {
  const restrictions: KeyRestriction[] = [];
  if (apiKey.scopedOrganizations?.length) restrictions.push('organization');
  if (apiKey.scopedTeams?.length) restrictions.push('project');
  return restrictions;
}

/**
 * SECURITY: a key scoped to organizations reaches only those; a key scoped to projects reaches
 * only the organizations that own one of its projects (the report: such a key could read, change
 * and delete every other organization of its user). 403, and only after membership (404) was
 * settled, so it says nothing to a non-member.
 */
export async function assertKeyReachesOrganization(
  manager: EntityManager,
  apiKey: PersonalApiKey,
  organization: Organization,
): Promise<void> {
  const scopedOrganizations = apiKey.scopedOrganizations ?? [];
  const scopedTeams = apiKey.scopedTeams ?? [];
  const reaches =
    (scopedOrganizations.length === 0 || scopedOrganizations.includes(organization.id)) &&
    (scopedTeams.length === 0 ||
      (await manager
        .getRepository(Team)
        .exists({ where: { organizationId: organization.id, id: In(scopedTeams) } })));
  if (!reaches) {
    throw permissionDenied(
      `API key does not have access to the requested organization: ID ${organization.id}.`,
    );
  }
}

/** Refuses a key whose restriction the route does not take (creating an organization, …). */
export function assertKeyNotRefused(
  apiKey: PersonalApiKey,
  rule: Pick<AccessRule, 'refuseRestrictedKeys'>,
): void {
  const refusal = rule.refuseRestrictedKeys;
  if (refusal && keyRestrictions(apiKey).some((restriction) => refusal.restrictions.includes(restriction))) {
    throw permissionDenied(refusal.detail);
  }
}

/** The key's organization and project restrictions, then the membership level: all 403, after membership (404). */
export async function assertOrganizationAccess(
  manager: EntityManager,
  apiKey: PersonalApiKey,
  organization: Organization,
  membership: OrganizationMembership,
  level: MembershipLevel | undefined,
): Promise<void> {
  await assertKeyReachesOrganization(manager, apiKey, organization);
  if (level !== undefined && membership.level < level) throw insufficientLevel();
}
