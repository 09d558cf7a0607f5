// The management API's surface: what the apps, their tests, the admin CLI and the benches import.
export { createManagementApp, type ManagementAppOptions } from './management.app';
export { ManagementModule, type ManagementModuleOptions } from './management.module';
export {
  startManagementService,
  type ManagementEngines,
  type ManagementService,
  type ManagementServiceOptions,
} from './management.service';
export type { CompanionService } from './health/companion-services.util';
export { BootstrapService, type InitialCredentials } from './bootstrap/bootstrap.service';
export { InviteService } from './invites/invite.service';
export { ApiError } from './common/api.error';
export { routeTable, type RouteEntry } from './routes/route-table.util';
export { ANSWERS_STATUSES } from './common/answers-statuses.decorator';
export { accessRuleForPath, projectPathOf } from './routes/project-scoped-paths.util';
export type { AccessRule } from './auth/access.decorator';
