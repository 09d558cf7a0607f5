import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { hashPersonalApiKey, type PersonalApiKey, type Team, type User } from '@hogbase/postgres';
import { ApiError, insufficientLevel, notFound, permissionDenied } from '../common/api.error';
import { isUuid } from '../common/iso.util';
import { MembershipRepository } from '../members/membership.repository';
import { projectIdFromParams } from '../routes/project-scoped-paths.util';
import { ACCESS_RULE, type AccessContext, type AccessRule, type KeyRestriction } from './access.decorator';
import { AccessRepository } from './access.repository';
import { OrganizationAccessService } from './organization-access.service';
import { PersonalApiKeyRepository } from './personal-api-key.repository';
import { scopesGrant } from './scopes.util';

type AccessRequest = Request & { access?: AccessContext };

const BEARER = /^Bearer\s+(\S.*)$/i;

const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000;

/**
 * The single gate of every route. Order matters for what a caller can learn: a scope failure is a
 * 403 before any id is looked up, a non-member's organization is the same 404 as an unknown id, and only
 * then come the key's restrictions and the membership level (all 403).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly personalApiKeys: PersonalApiKeyRepository,
    private readonly accessRepository: AccessRepository,
    private readonly memberships: MembershipRepository,
    private readonly organizationAccess: OrganizationAccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<AccessRule | undefined>(ACCESS_RULE, context.getHandler());
    if (!rule) {
      // Fail closed: a route that forgot its rule is unreachable, and the route-table test names it.
      throw new Error(
        `route ${context.getClass().name}.${context.getHandler().name} declares no access rule`,
      );
    }
    if (rule.scope === 'public') return true;

    const request = context.switchToHttp().getRequest<AccessRequest>();
    const match = BEARER.exec(request.headers.authorization ?? '');
    if (!match) {
      throw new ApiError('not_authenticated', 'Authentication credentials were not provided.');
    }
    const authenticated = await this.authenticate(match[1].trim());
    if (!authenticated) {
      throw new ApiError(
        'authentication_failed',
        'Personal API key found in request Authorization header is invalid.',
      );
    }
    const { apiKey, user } = authenticated;
    if (!scopesGrant(apiKey.scopes, rule.scope)) {
      throw permissionDenied(`API key missing required scope '${rule.scope}'`);
    }
    const access: AccessContext = { user, apiKey };
    const projectId = rule.projectParam ? projectIdFromParams(request.params, rule.projectParam) : undefined;
    if (projectId !== undefined) {
      const team = await this.resolveProject(projectId, access);
      // Membership is settled before any 403 could confirm the id exists.
      await this.resolveOrganization(team.organizationId, access, 'Project not found.');
      if (apiKey.scopedTeams?.length && !apiKey.scopedTeams.includes(team.id)) {
        throw permissionDenied(`API key does not have access to the requested project: ID ${team.id}.`);
      }
      access.team = team;
    } else if (rule.organizationParam) {
      await this.resolveOrganization(request.params[rule.organizationParam], access, 'Not found.');
    }
    if (access.organization) {
      await this.organizationAccess.assertKeyReachesOrganization(apiKey, access.organization);
    }
    const refusal = rule.refuseRestrictedKeys;
    if (
      refusal &&
      keyRestrictions(apiKey).some((restriction) => refusal.restrictions.includes(restriction))
    ) {
      throw permissionDenied(refusal.detail);
    }
    if (access.membership && rule.level !== undefined && access.membership.level < rule.level) {
      throw insufficientLevel();
    }
    request.access = access;
    return true;
  }

  /** Undefined when unknown; only the hash of the presented key is looked up. */
  async authenticate(presentedKey: string): Promise<{ apiKey: PersonalApiKey; user: User } | undefined> {
    const apiKey = await this.personalApiKeys.findBySecureValue(hashPersonalApiKey(presentedKey));
    if (!apiKey?.user?.isActive) return undefined;
    // PostHog writes last_used_at at most once an hour per key, so that reads do not all write.
    const now = new Date();
    if (!apiKey.lastUsedAt || now.getTime() - apiKey.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.personalApiKeys.markUsed(apiKey.id, now);
      apiKey.lastUsedAt = now;
    }
    return { apiKey, user: apiKey.user };
  }

  /** The project a route names: up to 9 digits or `@current`; anything else names none (404). */
  private async resolveProject(rawId: string | string[] | undefined, access: AccessContext): Promise<Team> {
    const value = Array.isArray(rawId) ? rawId[0] : rawId;
    const id =
      value === '@current' ? access.user.currentTeamId : /^\d{1,9}$/.test(value ?? '') ? Number(value) : null;
    if (id === null) throw notFound('Project not found.');
    const team = await this.accessRepository.findProject(id);
    if (!team) throw notFound('Project not found.');
    return team;
  }

  /** The user must be a member; `notFoundDetail` is the route's 404 otherwise. */
  private async resolveOrganization(
    rawId: string | string[] | undefined,
    access: AccessContext,
    notFoundDetail: string,
  ): Promise<void> {
    const value = Array.isArray(rawId) ? rawId[0] : rawId;
    const id = value === '@current' ? access.user.currentOrganizationId : value;
    if (!id || !isUuid(id)) throw notFound(notFoundDetail);
    const membership = await this.memberships.findOfUser(id, access.user.id);
    if (!membership) throw notFound(notFoundDetail);
    access.organization = await this.accessRepository.getOrganization(id);
    access.membership = membership;
  }
}

function keyRestrictions(apiKey: PersonalApiKey): KeyRestriction[] {
  const restrictions: KeyRestriction[] = [];
  if (apiKey.scopedOrganizations?.length) restrictions.push('organization');
  if (apiKey.scopedTeams?.length) restrictions.push('project');
  return restrictions;
}
