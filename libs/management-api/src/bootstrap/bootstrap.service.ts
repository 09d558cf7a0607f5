import { Injectable } from '@nestjs/common';
import {
  generatePersonalApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
  PluginsAccessLevel,
  type Team,
  type User,
} from '@hogbase/postgres';
import { PersonalApiKeyRepository } from '../auth/personal-api-key.repository';
import { isValidScope } from '../auth/scopes.util';
import { ApiError, notFound, validationError } from '../common/api.error';
import { isUuid } from '../common/iso.util';
import { MembershipRepository } from '../members/membership.repository';
import { OrganizationProvisioningService } from '../organizations/organization-provisioning.service';
import { OrganizationRepository } from '../organizations/organization.repository';
import { ProjectRepository } from '../projects/project.repository';
import { parsePluginId } from '../plugins/plugin-id.pipe';
import { PluginRepository } from '../plugins/plugin.repository';
import { UserRepository } from '../users/user.repository';

export const MAX_PERSONAL_API_KEYS = 10;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The contract of `initial-credentials.json` and of `admin bootstrap`. */
export interface InitialCredentials {
  email: string;
  personal_api_key: string;
  organization_id: string;
  project_id: number;
  project_api_key: string;
}

export interface NewPersonalApiKey {
  email: string;
  scopes: string[];
  label?: string;
  scopedOrganizations?: string[];
  scopedTeams?: number[];
}

const PLUGINS_ACCESS_LEVELS: Record<string, PluginsAccessLevel> = {
  none: PluginsAccessLevel.None,
  config: PluginsAccessLevel.Config,
  install: PluginsAccessLevel.Install,
  root: PluginsAccessLevel.Root,
};

/**
 * What is scripted before anyone has a key (the first admin, organization, project and keys), and
 * what only the instance operator decides, which no API key reaches.
 */
@Injectable()
export class BootstrapService {
  constructor(
    private readonly provisioning: OrganizationProvisioningService,
    private readonly organizations: OrganizationRepository,
    private readonly projects: ProjectRepository,
    private readonly memberships: MembershipRepository,
    private readonly users: UserRepository,
    private readonly apiKeys: PersonalApiKeyRepository,
    private readonly apps: PluginRepository,
  ) {}

  /** Idempotent on (email, organization name), but issues a new key each run: a key is shown once. */
  async bootstrap(input: {
    email: string;
    organizationName?: string;
    projectName?: string;
  }): Promise<InitialCredentials> {
    const organizationName = input.organizationName ?? 'Default organization';
    const projectName = input.projectName ?? 'Default project';
    const user = await this.findOrCreateUser(input.email);
    let organization = await this.organizations.findOfMemberNamed(user.id, organizationName);
    let team: Team;
    if (!organization) {
      ({ organization, team } = await this.provisioning.createOrganization(
        user,
        { name: organizationName },
        projectName,
      ));
    } else {
      team =
        (await this.projects.findNamed(organization.id, projectName)) ??
        (await this.provisioning.provisionProject(organization.id, projectName));
    }
    const personalApiKey = await this.createPersonalApiKey({
      email: user.email,
      scopes: ['*'],
      label: 'bootstrap',
    });
    return {
      email: user.email,
      personal_api_key: personalApiKey,
      organization_id: organization.id,
      project_id: team.id,
      project_api_key: team.apiToken,
    };
  }

  async findOrCreateUser(email: string): Promise<User> {
    const normalized = email.trim();
    if (!EMAIL_PATTERN.test(normalized) || normalized.length > 254) {
      throw validationError('Enter a valid email address.', 'email');
    }
    return (
      (await this.users.findByEmail(normalized)) ??
      (await this.users.insert({ email: normalized, isEmailVerified: true }))
    );
  }

  /** Returns the key itself; only its hash is stored. */
  async createPersonalApiKey(input: NewPersonalApiKey): Promise<string> {
    const user = await this.users.findByEmail(input.email.trim());
    if (!user) throw notFound(`No user with e-mail ${input.email}.`);
    if (input.scopes.length === 0) throw validationError('At least one scope is required.', 'scopes');
    for (const scope of input.scopes) {
      if (!isValidScope(scope)) throw validationError(`Invalid scope: ${scope}`, 'scopes');
    }
    await this.assertMemberOf(user, input.scopedOrganizations ?? [], input.scopedTeams ?? []);
    const keyCount = await this.apiKeys.countOfUser(user.id);
    if (keyCount >= MAX_PERSONAL_API_KEYS) {
      throw validationError(
        `You can only have ${MAX_PERSONAL_API_KEYS} personal API keys. Remove an existing key before creating a new one.`,
      );
    }
    const key = generatePersonalApiKey();
    await this.apiKeys.insert({
      id: generateRandomId(),
      userId: user.id,
      label: (input.label ?? 'cli').slice(0, 40),
      secureValue: hashPersonalApiKey(key),
      maskValue: maskApiKey(key),
      scopes: input.scopes,
      scopedOrganizations: input.scopedOrganizations?.length ? input.scopedOrganizations : null,
      scopedTeams: input.scopedTeams?.length ? input.scopedTeams : null,
    });
    return key;
  }

  /** Read-only in the API, as in PostHog. ROOT lets the organization's admins make apps global. */
  async setPluginsAccessLevel(
    organizationId: string,
    level: string,
  ): Promise<{ organization_id: string; plugins_access_level: number }> {
    const value =
      PLUGINS_ACCESS_LEVELS[level.toLowerCase()] ??
      Object.values(PLUGINS_ACCESS_LEVELS).find((known) => String(known) === level);
    if (value === undefined) {
      throw validationError(
        `"${level}" is not a plugins access level: none (0), config (3), install (6) or root (9).`,
        'level',
      );
    }
    const organization = isUuid(organizationId) ? await this.organizations.findById(organizationId) : null;
    if (!organization) throw notFound(`No organization with id ${organizationId}.`);
    await this.organizations.setPluginsAccessLevel(organization.id, value);
    return { organization_id: organization.id, plugins_access_level: value };
  }

  /** Other organizations' configs keep running the copy they took when enabled. */
  async setAppGlobal(
    appId: string,
    global: boolean,
  ): Promise<{ id: number; name: string; organization_id: string | null; is_global: boolean }> {
    const id = parsePluginId(appId);
    const plugin = id === null ? null : await this.apps.findAny(id);
    if (!plugin) throw notFound(`No app with id ${appId}.`);
    if (plugin.isGlobal !== global) await this.apps.setGlobal(plugin.id, global);
    return { id: plugin.id, name: plugin.name, organization_id: plugin.organizationId, is_global: global };
  }

  async revokePersonalApiKey(key: string): Promise<boolean> {
    return this.apiKeys.deleteBySecureValue(hashPersonalApiKey(key));
  }

  private async assertMemberOf(user: User, organizationIds: string[], teamIds: number[]): Promise<void> {
    if (organizationIds.length > 0) {
      const memberOf = await this.memberships.organizationIdsOf(user.id, organizationIds);
      if (memberOf.length !== new Set(organizationIds).size) {
        throw new ApiError(
          'invalid_input',
          'You must be a member of all organizations that you are scoping the key to.',
          'scoped_organizations',
        );
      }
    }
    if (teamIds.length > 0) {
      const reachable = await this.memberships.teamIdsReachableBy(user.id, teamIds);
      if (reachable.length !== new Set(teamIds).size) {
        throw new ApiError(
          'invalid_input',
          'You must be a member of all teams that you are scoping the key to.',
          'scoped_teams',
        );
      }
    }
  }
}
