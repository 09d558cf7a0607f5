import type { PersonalApiKey } from '@hogbase/postgres';
import { permissionDenied } from '../common/api.error';
import type { AccessRule, KeyRestriction } from './access.decorator';

/** The restrictions a key carries; none for a key that reaches every organization of its user. */
export function keyRestrictions(apiKey: PersonalApiKey): KeyRestriction[] {
  const restrictions: KeyRestriction[] = [];
  if (apiKey.scopedOrganizations?.length) restrictions.push('organization');
  if (apiKey.scopedTeams?.length) restrictions.push('project');
  return restrictions;
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
