import type { Organization, Plugin, PluginConfig } from '@hogbase/postgres';

/**
 * SECURITY: a config of another organization's app (one it sees because the app is global) runs a
 * copy of the app taken when its admin enabled or upgraded it, so that the app's organization
 * cannot change the code that reads this project's events and secrets. Configs of the
 * organization's own apps, and of inline apps (the server's), follow the latest code.
 */
export function pinsCode(organization: Organization, plugin: Plugin): boolean {
  return plugin.organizationId !== null && plugin.organizationId !== organization.id;
}

/** The schema a config's values follow: its pinned copy's, else the app's. */
export function configSchemaOf(config: PluginConfig, plugin: Plugin | undefined): unknown {
  return config.codePinnedAt ? config.pinnedConfigSchema : plugin?.configSchema;
}
