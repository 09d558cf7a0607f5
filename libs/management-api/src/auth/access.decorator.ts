import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type {
  MembershipLevel,
  Organization,
  OrganizationMembership,
  PersonalApiKey,
  Team,
  User,
} from '@hogbase/postgres';
import type { Scope } from './scopes.util';

export const ACCESS_RULE = 'hogbase:access-rule';

/** How a personal API key is narrowed: to some organizations, or to some projects. */
export type KeyRestriction = 'organization' | 'project';

export interface AccessRule {
  /** The API key scope the route needs; `public` routes take no credentials. */
  scope: Scope | 'public';
  /** Path parameter naming the organization the route acts in (UUID or `@current`). */
  organizationParam?: string;
  /**
   * Path parameter naming the project the route acts in (integer or `@current`). A route under both
   * prefixes names both parameters: the one its path has applies.
   * `project_id` also reads `environment_id`, on the `/api/environments/` twin of the path.
   */
  projectParam?: string;
  /** Lowest membership level in that organization; any member when absent. */
  level?: MembershipLevel;
  /** Keys with one of these restrictions are refused (403): the route acts beyond what they cover. */
  refuseRestrictedKeys?: { restrictions: KeyRestriction[]; detail: string };
}

/** Required on every route: the guard refuses a route without it. Published in the OpenAPI document. */
export function Access(rule: AccessRule): MethodDecorator {
  const decorators = [SetMetadata(ACCESS_RULE, rule), ApiExtension('x-access', rule)];
  if (rule.scope !== 'public') decorators.push(ApiSecurity('PersonalAPIKey', [rule.scope]));
  return applyDecorators(...decorators);
}

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

export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): AccessContext => {
  const request = context.switchToHttp().getRequest<{ access?: AccessContext }>();
  if (!request.access) throw new Error('Caller used on a route without an authenticated access rule');
  return request.access;
});
