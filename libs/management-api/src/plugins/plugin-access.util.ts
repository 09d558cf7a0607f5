import { PluginsAccessLevel, type Organization, type Plugin } from '@hogbase/postgres';
import { notFound, permissionDenied } from '../common/api.error';

/** PostHog's PluginsAccessLevelPermission: reads need CONFIG (3), writes INSTALL (6). */
export function assertPluginAccess(organization: Organization, write: boolean): void {
  const needed = write ? PluginsAccessLevel.Install : PluginsAccessLevel.Config;
  if (organization.pluginsAccessLevel < Number(needed)) {
    throw permissionDenied("Your organization's plugin access level is insufficient.");
  }
}

export function assertManagesGlobalApps(organization: Organization): void {
  if (organization.pluginsAccessLevel < Number(PluginsAccessLevel.Root)) {
    throw permissionDenied("This organization can't manage global plugins!");
  }
}

/** PostHog's PluginOwnershipPermission: an app seen here but installed by another organization is read-only. */
export function assertOwnsPlugin(organization: Organization, plugin: Plugin): void {
  if (plugin.organizationId !== organization.id) {
    throw permissionDenied('This plugin installation is managed by another organization');
  }
  if (plugin.isGlobal) assertManagesGlobalApps(organization);
}

/**
 * PostHog's get_plugin_with_permissions, for the actions on one app: another organization's app
 * is 404 there, and the action needs install rights (`Plugin <reason> is not available…`).
 */
export function assertActionAllowed(organization: Organization, plugin: Plugin, reason: string): void {
  if (plugin.organizationId !== organization.id) throw notFound();
  if (organization.pluginsAccessLevel < Number(PluginsAccessLevel.Install)) {
    throw permissionDenied(`Plugin ${reason} is not available for the current organization!`);
  }
}
