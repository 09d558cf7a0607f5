import type { Organization, OrganizationMembership, PersonalApiKey, Team, User } from '@hogbase/postgres';

export interface AccessContext {
  user: User;
  apiKey: PersonalApiKey;
  /** Set when the route names an organization (directly or through its project). */
  organization?: Organization;
  membership?: OrganizationMembership;
  team?: Team;
}

export interface ResolvedOrganization {
  organization: Organization;
  membership: OrganizationMembership;
}

export interface ResolvedProject extends ResolvedOrganization {
  team: Team;
}

export function requireOrganization(access: AccessContext): ResolvedOrganization {
  if (!access.organization || !access.membership) {
    throw new Error('route declared no organizationParam/projectParam but needs an organization');
  }
  return { organization: access.organization, membership: access.membership };
}

export function requireProject(access: AccessContext): ResolvedProject {
  if (!access.team) throw new Error('route declared no projectParam but needs a project');
  return { ...requireOrganization(access), team: access.team };
}
