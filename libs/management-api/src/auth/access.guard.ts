import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { Team } from '@hogbase/postgres';
import { ApiError, insufficientLevel, notFound, permissionDenied } from '../common/api.error';
import { MembershipRepository } from '../members/membership.repository';
import { projectIdFromParams } from '../routes/project-scoped-paths.util';
import { ACCESS_RULE, AccessRule } from './access.decorator';
import type { AccessContext } from './access-context.util';
import { AccessOrganizationIdPipe, AccessProjectIdPipe } from './access-params.pipe';
import { AccessRepository } from './access.repository';
import { OrganizationAccessService } from './organization-access.service';
import { assertKeyNotRefused } from './organization-access.util';
import { PersonalApiKeyService } from './personal-api-key.service';
import { scopesGrant } from './scopes.util';

type AccessRequest = Request & { access?: AccessContext };

const BEARER = /^Bearer\s+(\S.*)$/i;

const projectIds = new AccessProjectIdPipe();
const organizationIds = new AccessOrganizationIdPipe();
const projectOrganizationIds = new AccessOrganizationIdPipe('Project not found.');

/**
 * The single gate of every route: authenticates the personal API key, checks its scope, resolves
 * the organization or project the route names, and applies membership and key restrictions.
 *
 * Order matters for what a caller can learn: a scope failure answers 403 before any lookup (it
 * says nothing about ids), and an organization the user is not a member of answers 404 exactly as
 * an id that does not exist. Only then come the key's restrictions (its projects, its
 * organizations, or the organizations of its projects), the route's refusal of restricted keys,
 * and the membership level: all 403.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly personalApiKeys: PersonalApiKeyService,
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
    const authenticated = await this.personalApiKeys.authenticate(match[1].trim());
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
    // A controller serving both prefixes names both parameters: the one in the path applies. A
    // project is named `project_id` under /api/projects/ and `environment_id` under its twin.
    const projectId = rule.projectParam ? projectIdFromParams(request.params, rule.projectParam) : undefined;
    if (projectId !== undefined) {
      const team = await this.resolveProject(projectId, access);
      // A project of an organization the user is not in answers exactly as a project that does not
      // exist, whatever the key's projects: membership is settled before any 403 names the id.
      await this.resolveOrganization(team.organizationId, access, projectOrganizationIds);
      if (apiKey.scopedTeams?.length && !apiKey.scopedTeams.includes(team.id)) {
        throw permissionDenied(`API key does not have access to the requested project: ID ${team.id}.`);
      }
      access.team = team;
    } else if (rule.organizationParam) {
      await this.resolveOrganization(request.params[rule.organizationParam], access, organizationIds);
    }
    if (access.organization) {
      await this.organizationAccess.assertKeyReachesOrganization(apiKey, access.organization);
    }
    assertKeyNotRefused(apiKey, rule);
    if (access.membership && rule.level !== undefined && access.membership.level < rule.level) {
      throw insufficientLevel();
    }
    request.access = access;
    return true;
  }

  private async resolveProject(rawId: string | string[] | undefined, access: AccessContext): Promise<Team> {
    const value = Array.isArray(rawId) ? rawId[0] : rawId;
    const id = value === '@current' ? access.user.currentTeamId : projectIds.transform(value ?? '');
    if (id === null) throw notFound('Project not found.');
    const team = await this.accessRepository.findProject(id);
    if (!team) throw notFound('Project not found.');
    return team;
  }

  /** `ids` reads the path's id, with the 404 the route answers for one that names nothing. */
  private async resolveOrganization(
    rawId: string | string[] | undefined,
    access: AccessContext,
    ids: AccessOrganizationIdPipe,
  ): Promise<void> {
    const value = Array.isArray(rawId) ? rawId[0] : rawId;
    const id = ids.transform((value === '@current' ? access.user.currentOrganizationId : value) ?? '');
    const membership = await this.memberships.findOfUser(id, access.user.id);
    if (!membership) throw notFound(ids.notFoundDetail);
    access.organization = await this.accessRepository.getOrganization(id);
    access.membership = membership;
  }
}
