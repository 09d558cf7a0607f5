import type { EntityManager } from 'typeorm';
import type { Organization, Plugin, PluginConfig } from '@hogbase/postgres';

/**
 * The app's code now: its server entry as the apps runtime picks it (libs/apps-runtime
 * enabled-apps.ts) and `site.ts` as capture serves it (site-apps.cache.ts). Constant text.
 */
const CURRENT_CODE = `
  LEFT JOIN LATERAL (
    SELECT f.transpiled FROM plugin_source_files f
    WHERE f.plugin_id = p.id AND f.status = 'TRANSPILED' AND f.filename NOT IN ('site.ts', 'frontend.tsx')
    ORDER BY f.filename IN ('index.ts', 'index.js') DESC, f.filename
    LIMIT 1
  ) entry ON true
  LEFT JOIN LATERAL (
    SELECT f.transpiled FROM plugin_source_files f
    WHERE f.plugin_id = p.id AND f.filename = 'site.ts' AND f.status = 'TRANSPILED'
  ) site ON true`;

/**
 * SECURITY: a config of another organization's app (one it sees because the app is global) runs a
 * copy of the app taken when its admin enabled or upgraded it, so that the app's organization
 * cannot change the code that reads this project's events and secrets. Configs of the
 * organization's own apps, and of inline apps (the server's), follow the latest code.
 */
export function pinsCode(organization: Organization, plugin: Plugin): boolean {
  return plugin.organizationId !== null && plugin.organizationId !== organization.id;
}

/**
 * Copies the app's current code, site code, config schema and capabilities into the config, as of
 * `at`. The capabilities decide whether ingestion calls the pinned code at all (the apps runtime's
 * RUN_CAPABILITIES): they are the ones the installer found in the entry copied here.
 */
export async function pinCurrentCode(manager: EntityManager, config: PluginConfig, at: Date): Promise<void> {
  await manager.query(
    `UPDATE plugin_configs c
     SET code_pinned_at = $2, updated_at = $2, pinned_code = entry.transpiled,
         pinned_site_code = site.transpiled, pinned_config_schema = p.config_schema,
         pinned_capabilities = p.capabilities
     FROM plugins p ${CURRENT_CODE}
     WHERE p.id = c.plugin_id AND c.id = $1`,
    [config.id, at],
  );
  const [{ pinned_config_schema }] = await manager.query<{ pinned_config_schema: unknown }[]>(
    'SELECT pinned_config_schema FROM plugin_configs WHERE id = $1',
    [config.id],
  );
  config.codePinnedAt = at;
  config.updatedAt = at;
  config.pinnedConfigSchema = pinned_config_schema;
}

/** The schema a config's values follow: its pinned copy's, else the app's. */
export function configSchemaOf(config: PluginConfig, plugin: Plugin | undefined): unknown {
  return config.codePinnedAt ? config.pinnedConfigSchema : plugin?.configSchema;
}

/** Ids of the pinned configs among these whose app has changed since (code, site code or schema). */
export async function configsWithUpdates(
  manager: EntityManager,
  configs: PluginConfig[],
): Promise<Set<number>> {
  const pinned = configs.filter((config) => config.codePinnedAt).map((config) => config.id);
  if (pinned.length === 0) return new Set();
  const rows = await manager.query<{ id: number }[]>(
    `SELECT c.id FROM plugin_configs c JOIN plugins p ON p.id = c.plugin_id ${CURRENT_CODE}
     WHERE c.id = ANY($1) AND c.code_pinned_at IS NOT NULL
       AND (c.pinned_code IS DISTINCT FROM entry.transpiled
         OR c.pinned_site_code IS DISTINCT FROM site.transpiled
         OR c.pinned_config_schema IS DISTINCT FROM p.config_schema)`,
    [pinned],
  );
  return new Set(rows.map((row) => row.id));
}
