import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { openDataSource } from './data-source.util';
import { RestrictGlobalApps1764400000000 } from './migrations/1764400000000-RestrictGlobalApps';
import { POSTGRES_ENGINES, startMigrationTestDatabase } from './testing/migration-test.util';

/**
 * The migration of issue 27 on a database that has used pipeline apps: organizations that got ROOT
 * from the old default, an app its organization made global, and a config of it in another
 * organization, which must keep running what it runs now.
 */
describe.each(POSTGRES_ENGINES)('RestrictGlobalApps on a database with apps, on %s', (_name, engine) => {
  let url: string;
  let stop: () => Promise<void>;
  let client: Client;
  let publisher: string;
  let victim: string;
  let configured: string;
  let appId: number;
  let foreignConfig: number;
  let ownConfig: number;

  async function organization(name: string, level?: number): Promise<string> {
    const id = randomUUID();
    await client.query(
      level === undefined
        ? 'INSERT INTO organizations (id, name, slug) VALUES ($1, $2, $3)'
        : 'INSERT INTO organizations (id, name, slug, plugins_access_level) VALUES ($1, $2, $3, $4)',
      [
        id,
        name,
        `${name.toLowerCase()}-${randomBytes(3).toString('hex')}`,
        ...(level === undefined ? [] : [level]),
      ],
    );
    return id;
  }

  async function config(organizationId: string, pluginId: number): Promise<number> {
    const team = await client.query<{ id: number }>(
      `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Web', $3) RETURNING id`,
      [randomUUID(), organizationId, `phc_${randomBytes(8).toString('hex')}`],
    );
    const inserted = await client.query<{ id: number }>(
      `INSERT INTO plugin_configs (plugin_id, team_id, enabled, web_token) VALUES ($1, $2, true, $3) RETURNING id`,
      [pluginId, team.rows[0].id, randomBytes(16).toString('hex')],
    );
    return inserted.rows[0].id;
  }

  beforeAll(async () => {
    // The schema as it was before the migration.
    ({ url, client, stop } = await startMigrationTestDatabase(
      engine,
      'hogbase-restrict-global-apps-test-',
      RestrictGlobalApps1764400000000,
    ));
    publisher = await organization('Publisher');
    victim = await organization('Victim');
    configured = await organization('Configured', 3);
    appId = (
      await client.query<{ id: number }>(
        `INSERT INTO plugins (organization_id, plugin_type, name, config_schema, is_global)
         VALUES ($1, 'source', 'Global webhook', '[{"key": "token", "secret": true}]', true) RETURNING id`,
        [publisher],
      )
    ).rows[0].id;
    await client.query(
      `INSERT INTO plugin_source_files (plugin_id, filename, source, transpiled, status) VALUES
       ($1, 'plugin.json', '{}', NULL, NULL),
       ($1, 'index.ts', 'v1', 'exports.onEvent = () => "v1";', 'TRANSPILED'),
       ($1, 'site.ts', 'site v1', '(function () { return { inject() {} }; })', 'TRANSPILED')`,
      [appId],
    );
    foreignConfig = await config(victim, appId);
    ownConfig = await config(publisher, appId);

    await (await openDataSource({ url })).destroy();
  });

  afterAll(async () => {
    await stop?.();
  });

  it('lowers organizations at ROOT, and only those, to INSTALL; new ones get INSTALL', async () => {
    const { rows } = await client.query<{ id: string; plugins_access_level: number }>(
      'SELECT id, plugins_access_level FROM organizations WHERE id = ANY($1)',
      [[publisher, victim, configured]],
    );
    expect(Object.fromEntries(rows.map((row) => [row.id, row.plugins_access_level]))).toEqual({
      [publisher]: 6,
      [victim]: 6,
      [configured]: 3,
    });
    const created = await organization('Created after');
    const { rows: fresh } = await client.query<{ plugins_access_level: number }>(
      'SELECT plugins_access_level FROM organizations WHERE id = $1',
      [created],
    );
    expect(fresh[0].plugins_access_level).toBe(6);
  });

  it('makes the app local again: only the operator makes apps global now', async () => {
    const { rows } = await client.query<{ is_global: boolean }>(
      'SELECT is_global FROM plugins WHERE id = $1',
      [appId],
    );
    expect(rows[0].is_global).toBe(false);
  });

  it("pins another organization's config to the code, site code and schema it runs now; the owner's follows", async () => {
    const { rows } = await client.query<{
      id: number;
      pinned: boolean;
      pinned_code: string | null;
      pinned_site_code: string | null;
      pinned_config_schema: unknown;
    }>(
      `SELECT id, code_pinned_at IS NOT NULL AS pinned, pinned_code, pinned_site_code, pinned_config_schema
       FROM plugin_configs WHERE id = ANY($1) ORDER BY id`,
      [[foreignConfig, ownConfig]],
    );
    expect(rows).toEqual([
      {
        id: foreignConfig,
        pinned: true,
        pinned_code: 'exports.onEvent = () => "v1";',
        pinned_site_code: '(function () { return { inject() {} }; })',
        pinned_config_schema: [{ key: 'token', secret: true }],
      },
      { id: ownConfig, pinned: false, pinned_code: null, pinned_site_code: null, pinned_config_schema: null },
    ]);
  });
});
