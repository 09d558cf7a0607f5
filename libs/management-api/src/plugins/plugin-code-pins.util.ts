import type { Organization, Plugin, PluginConfig } from '@hogbase/postgres';

/**
 * SECURITY: a config of another organization's global app runs a copy taken when enabled or
 * upgraded, so that organization cannot change code that reads this project's events and secrets.
 */
export function pinsCode(organization: Organization, plugin: Plugin): boolean {
  return plugin.organizationId !== null && plugin.organizationId !== organization.id;
}

/** The schema a config's values follow: its pinned copy's, else the app's. */
export function configSchemaOf(config: PluginConfig, plugin: Plugin | undefined): unknown {
  return config.codePinnedAt ? config.pinnedConfigSchema : plugin?.configSchema;
}
