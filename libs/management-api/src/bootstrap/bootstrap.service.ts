import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  generatePersonalApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
  Organization,
  OrganizationMembership,
  PersonalApiKey,
  Plugin,
  PluginsAccessLevel,
  Team,
  User,
} from '@hogbase/postgres';
import { isValidScope } from '../auth/scopes';
import { ApiError, notFound, validationError } from '../common/api-error';
import { isUuid } from '../common/iso.util';
import { OrganizationProvisioningService } from '../organizations/organization-provisioning.service';
import { parsePluginId } from '../plugins/plugin-access.util';

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

/** `set-plugins-access-level`'s names for PostHog's levels, and the numbers themselves. */
const PLUGINS_ACCESS_LEVELS: Record<string, PluginsAccessLevel> = {
  none: PluginsAccessLevel.None,
  config: PluginsAccessLevel.Config,
  install: PluginsAccessLevel.Install,
  root: PluginsAccessLevel.Root,
};

/**
 * What a platform team scripts before anyone has a key: the first admin, organization, project
 * and keys. Used by the admin CLI and by the first start of the standalone app. Also what only
 * the instance operator decides, which no API key reaches: an organization's plugins access level
 * and which apps are global.
 */
@Injectable()
export class BootstrapService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly provisioning: OrganizationProvisioningService,
  ) {}

  /**
   * Idempotent on (email, organization name): a second run reuses the user, the organization and
   * the project of that name, and issues a new key (a key cannot be shown twice).
   */
  async bootstrap(input: {
    email: string;
    organizationName?: string;
    projectName?: string;
  }): Promise<InitialCredentials> {
    const organizationName = input.organizationName ?? 'Default organization';
    const projectName = input.projectName ?? 'Default project';
    const user = await this.findOrCreateUser(input.email);
    let organization = await this.dataSource
      .getRepository(Organization)
      .createQueryBuilder('organization')
      .innerJoin(OrganizationMembership, 'membership', 'membership.organization_id = organization.id')
      .where('membership.user_id = :userId', { userId: user.id })
      .andWhere('organization.name = :name', { name: organizationName })
      .orderBy('organization.created_at', 'ASC')
      .getOne();
    let team: Team | null = null;
    if (!organization) {
      ({ organization, team } = await this.provisioning.createOrganization(
        user,
        { name: organizationName },
        projectName,
      ));
    } else {
      team = await this.dataSource.getRepository(Team).findOne({
        where: { organizationId: organization.id, name: projectName },
        order: { id: 'ASC' },
      });
      team ??= await this.dataSource.transaction((manager) =>
        this.provisioning.createProject(manager, organization!.id, projectName),
      );
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
    const users = this.dataSource.getRepository(User);
    const existing = await users
      .createQueryBuilder('user')
      .where('lower(user.email) = lower(:email)', { email: normalized })
      .getOne();
    if (existing) return existing;
    const uuid = uuidv7();
    return users.save(users.create({ uuid, distinctId: uuid, email: normalized, isEmailVerified: true }));
  }

  /** Returns the key itself: the only time it exists outside the caller's hands is this return value. */
  async createPersonalApiKey(input: NewPersonalApiKey): Promise<string> {
    const user = await this.dataSource
      .getRepository(User)
      .createQueryBuilder('user')
      .where('lower(user.email) = lower(:email)', { email: input.email.trim() })
      .getOne();
    if (!user) throw notFound(`No user with e-mail ${input.email}.`);
    if (input.scopes.length === 0) throw validationError('At least one scope is required.', 'scopes');
    for (const scope of input.scopes) {
      if (!isValidScope(scope)) throw validationError(`Invalid scope: ${scope}`, 'scopes');
    }
    await this.assertMemberOf(user, input.scopedOrganizations ?? [], input.scopedTeams ?? []);
    const keyCount = await this.dataSource.getRepository(PersonalApiKey).countBy({ userId: user.id });
    if (keyCount >= MAX_PERSONAL_API_KEYS) {
      throw validationError(
        `You can only have ${MAX_PERSONAL_API_KEYS} personal API keys. Remove an existing key before creating a new one.`,
      );
    }
    const key = generatePersonalApiKey();
    await this.dataSource.getRepository(PersonalApiKey).insert({
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

  /**
   * Sets an organization's plugins_access_level (read-only in the API, as in PostHog): `none`,
   * `config`, `install`, `root` or 0, 3, 6, 9. ROOT lets the organization's admins make apps global.
   */
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
    const organization = isUuid(organizationId)
      ? await this.dataSource.getRepository(Organization).findOneBy({ id: organizationId })
      : null;
    if (!organization) throw notFound(`No organization with id ${organizationId}.`);
    await this.dataSource
      .getRepository(Organization)
      .update({ id: organization.id }, { pluginsAccessLevel: value });
    return { organization_id: organization.id, plugins_access_level: value };
  }

  /**
   * Makes an app global (every organization sees it and may enable it) or not. Configs of other
   * organizations run the copy of the app they took when enabled, whatever happens to it later.
   */
  async setAppGlobal(
    appId: string,
    global: boolean,
  ): Promise<{ id: number; name: string; organization_id: string | null; is_global: boolean }> {
    const id = parsePluginId(appId);
    const plugins = this.dataSource.getRepository(Plugin);
    const plugin = id === null ? null : await plugins.findOneBy({ id });
    if (!plugin) throw notFound(`No app with id ${appId}.`);
    if (plugin.isGlobal !== global) {
      await plugins.update({ id: plugin.id }, { isGlobal: global });
    }
    return { id: plugin.id, name: plugin.name, organization_id: plugin.organizationId, is_global: global };
  }

  /** Revokes a key: it stops authenticating at once. */
  async revokePersonalApiKey(key: string): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(PersonalApiKey)
      .delete({ secureValue: hashPersonalApiKey(key) });
    return (result.affected ?? 0) > 0;
  }

  private async assertMemberOf(user: User, organizationIds: string[], teamIds: number[]): Promise<void> {
    if (organizationIds.length > 0) {
      const rows: { organization_id: string }[] = await this.dataSource.query(
        `SELECT organization_id::text FROM organization_memberships WHERE user_id = $1 AND organization_id::text = ANY($2::text[])`,
        [user.id, organizationIds],
      );
      if (rows.length !== new Set(organizationIds).size) {
        throw new ApiError(
          'invalid_input',
          'You must be a member of all organizations that you are scoping the key to.',
          'scoped_organizations',
        );
      }
    }
    if (teamIds.length > 0) {
      const rows: { id: number }[] = await this.dataSource.query(
        `SELECT t.id FROM teams t JOIN organization_memberships m ON m.organization_id = t.organization_id
          WHERE m.user_id = $1 AND t.id = ANY($2::int[])`,
        [user.id, teamIds],
      );
      if (rows.length !== new Set(teamIds).size) {
        throw new ApiError(
          'invalid_input',
          'You must be a member of all teams that you are scoping the key to.',
          'scoped_teams',
        );
      }
    }
  }
}
