export {
  openDataSource,
  POSTGRES_TIMEOUTS,
  postgresDataSourceOptions,
  postgresPoolTimeouts,
  type PostgresTimeouts,
} from './data-source.util';
export { guardDataSource, openTransactionManager, PostgresQueryTimeoutError } from './connection-guard.util';
export { migratePostgres, pendingPostgresMigrations } from './migration-runner.util';
export { MIGRATIONS } from './migrations';

export { ActivityLog } from './entities/activity-log.entity';
export {
  BATCH_EXPORT_RUN_STATUSES,
  BatchExport,
  BatchExportBackfill,
  BatchExportLogEntry,
  BatchExportRun,
  type BatchExportRunStatus,
} from './entities/batch-export.entity';
export { Cohort } from './entities/cohort.entity';
export { Dashboard } from './entities/dashboard.entity';
export { FeatureFlag } from './entities/feature-flag.entity';
export { Organization, PluginsAccessLevel } from './entities/organization.entity';
export { OrganizationDomain } from './entities/organization-domain.entity';
export { OrganizationInvite } from './entities/organization-invite.entity';
export {
  MEMBERSHIP_LEVELS,
  MembershipLevel,
  OrganizationMembership,
} from './entities/organization-membership.entity';
export { PersonalApiKey } from './entities/personal-api-key.entity';
export {
  Plugin,
  PluginAttachment,
  PluginConfig,
  PluginLogEntry,
  PluginSourceFile,
  PLUGIN_TYPES,
  type PluginSourceFileStatus,
  type PluginType,
} from './entities/plugin.entity';
export { ProjectSecretApiKey } from './entities/project-secret-api-key.entity';
export {
  FeatureFlagRoleAccess,
  OrganizationResourceAccess,
  ResourceAccessLevel,
  Role,
  RoleMembership,
} from './entities/role.entity';
export { Team } from './entities/team.entity';
export { User } from './entities/user.entity';

export {
  generatePersonalApiKey,
  generateProjectApiToken,
  generateProjectSecretApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
} from './tokens.util';
export { refreshBackfillStatus } from './batch-export-backfill-status.util';

export {
  EmbeddedPostgresOpenError,
  findRunningEmbeddedPostgres,
  restrictToOwner,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from './embedded-postgres.server';
export {
  dataDirHolder,
  DataDirInUseError,
  describeHolder,
  lockDataDir,
  type DataDirLock,
} from './data-dir-lock.util';
export { describeWriteError, storageProblem } from './data-dir-space.util';
