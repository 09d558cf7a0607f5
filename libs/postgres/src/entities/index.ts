import { ActivityLog } from './activity-log.entity';
import { BatchExport, BatchExportBackfill, BatchExportLogEntry, BatchExportRun } from './batch-export.entity';
import { Cohort } from './cohort.entity';
import { Dashboard } from './dashboard.entity';
import { FeatureFlag } from './feature-flag.entity';
import { GroupTypeMapping } from './group-type-mapping.entity';
import { Group } from './group.entity';
import { OrganizationDomain } from './organization-domain.entity';
import { OrganizationInvite } from './organization-invite.entity';
import { OrganizationMembership } from './organization-membership.entity';
import { Organization } from './organization.entity';
import { PersonDistinctId } from './person-distinct-id.entity';
import { Person } from './person.entity';
import { PersonalApiKey } from './personal-api-key.entity';
import { ProjectSecretApiKey } from './project-secret-api-key.entity';
import { Plugin, PluginAttachment, PluginConfig, PluginLogEntry, PluginSourceFile } from './plugin.entity';
import { FeatureFlagRoleAccess, OrganizationResourceAccess, Role, RoleMembership } from './role.entity';
import { Team } from './team.entity';
import { User } from './user.entity';

export * from './activity-log.entity';
export * from './batch-export.entity';
export * from './cohort.entity';
export * from './dashboard.entity';
export * from './feature-flag.entity';
export * from './group-type-mapping.entity';
export * from './group.entity';
export * from './organization-domain.entity';
export * from './organization-invite.entity';
export * from './organization-membership.entity';
export * from './organization.entity';
export * from './person-distinct-id.entity';
export * from './person.entity';
export * from './personal-api-key.entity';
export * from './project-secret-api-key.entity';
export * from './plugin.entity';
export * from './role.entity';
export * from './team.entity';
export * from './user.entity';

export const ENTITIES = [
  User,
  Organization,
  OrganizationMembership,
  Team,
  PersonalApiKey,
  ProjectSecretApiKey,
  OrganizationInvite,
  OrganizationDomain,
  Person,
  PersonDistinctId,
  GroupTypeMapping,
  Group,
  FeatureFlag,
  Role,
  RoleMembership,
  FeatureFlagRoleAccess,
  OrganizationResourceAccess,
  ActivityLog,
  Cohort,
  Dashboard,
  BatchExport,
  BatchExportBackfill,
  BatchExportRun,
  BatchExportLogEntry,
  Plugin,
  PluginSourceFile,
  PluginConfig,
  PluginAttachment,
  PluginLogEntry,
];
