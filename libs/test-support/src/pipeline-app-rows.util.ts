import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

type Queryable = Pick<Pool, 'query'>;

export interface ProjectRows {
  organizationId: string;
  teamId: number;
  apiToken: string;
}

/** An organization and its one project, inserted as rows: for tests below the management API. */
export async function insertProjectRows(pool: Queryable, organizationName: string): Promise<ProjectRows> {
  const organizationId = (
    await pool.query<{ id: string }>(
      `INSERT INTO organizations (id, name, slug) VALUES ($1, $2, $3) RETURNING id`,
      [randomUUID(), organizationName, `${organizationName.toLowerCase()}-${randomBytes(3).toString('hex')}`],
    )
  ).rows[0].id;
  const apiToken = `phc_${randomBytes(8).toString('hex')}`;
  const teamId = (
    await pool.query<{ id: number }>(
      `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Web', $3) RETURNING id`,
      [randomUUID(), organizationId, apiToken],
    )
  ).rows[0].id;
  return { organizationId, teamId, apiToken };
}

export interface EnabledAppRows {
  organizationId: string;
  teamId: number;
  /** CommonJS, as the installer stores it once bundled. */
  code: string;
  /** Plain values: seal secret fields first, as the API stores them. */
  config: Record<string, unknown>;
  capabilities?: Record<string, unknown>;
  metrics?: Record<string, unknown>;
  name?: string;
}

/** A source app as the installer leaves it (one transpiled `index.ts`), enabled; answers the config's id. */
export async function insertEnabledAppRows(pool: Queryable, app: EnabledAppRows): Promise<number> {
  const pluginId = (
    await pool.query<{ id: number }>(
      `INSERT INTO plugins (organization_id, plugin_type, name, capabilities, metrics)
       VALUES ($1, 'source', $2, $3, $4) RETURNING id`,
      [
        app.organizationId,
        app.name ?? 'test app',
        JSON.stringify(app.capabilities ?? {}),
        JSON.stringify(app.metrics ?? {}),
      ],
    )
  ).rows[0].id;
  await pool.query(
    `INSERT INTO plugin_source_files (plugin_id, filename, source, transpiled, status)
     VALUES ($1, 'index.ts', $2, $2, 'TRANSPILED')`,
    [pluginId, app.code],
  );
  return (
    await pool.query<{ id: number }>(
      `INSERT INTO plugin_configs (plugin_id, team_id, enabled, "order", config, web_token)
       VALUES ($1, $2, true, 0, $3, $4) RETURNING id`,
      [pluginId, app.teamId, JSON.stringify(app.config), randomBytes(16).toString('hex')],
    )
  ).rows[0].id;
}
