import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Global apps cross organizations only on the operator's word:
 * - a config of another organization's app runs a pinned copy (code, site.ts, config schema) until its
 *   own admin upgrades it; existing configs are pinned to what they run now;
 * - ROOT (9) only ever came from the column default, so every organization goes to INSTALL (6), the new
 *   default; the admin CLI's `set-plugins-access-level` and `set-app-global` grant them again;
 * - apps made global by their organization stop being global; configs keep their pinned copy.
 * NOTE: `down` cannot restore which apps were global.
 */
export class RestrictGlobalApps1764400000000 implements MigrationInterface {
  name = 'RestrictGlobalApps1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE plugin_configs
        ADD COLUMN code_pinned_at timestamptz,
        ADD COLUMN pinned_code text,
        ADD COLUMN pinned_site_code text,
        ADD COLUMN pinned_config_schema jsonb`);
    // The entry as the apps runtime picks it, and site.ts as capture serves it, at this moment.
    await queryRunner.query(`
      UPDATE plugin_configs c
      SET code_pinned_at = now(),
          pinned_code = entry.transpiled,
          pinned_site_code = site.transpiled,
          pinned_config_schema = p.config_schema
      FROM teams t, plugins p
      LEFT JOIN LATERAL (
        SELECT f.transpiled FROM plugin_source_files f
        WHERE f.plugin_id = p.id AND f.status = 'TRANSPILED' AND f.filename NOT IN ('site.ts', 'frontend.tsx')
        ORDER BY f.filename IN ('index.ts', 'index.js') DESC, f.filename
        LIMIT 1
      ) entry ON true
      LEFT JOIN LATERAL (
        SELECT f.transpiled FROM plugin_source_files f
        WHERE f.plugin_id = p.id AND f.filename = 'site.ts' AND f.status = 'TRANSPILED'
      ) site ON true
      WHERE t.id = c.team_id AND p.id = c.plugin_id
        AND p.organization_id IS NOT NULL AND p.organization_id <> t.organization_id`);

    await queryRunner.query('ALTER TABLE organizations ALTER COLUMN plugins_access_level SET DEFAULT 6');
    await queryRunner.query(
      'UPDATE organizations SET plugins_access_level = 6 WHERE plugins_access_level = 9',
    );
    await queryRunner.query(
      'UPDATE plugins SET is_global = false WHERE is_global AND organization_id IS NOT NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'UPDATE organizations SET plugins_access_level = 9 WHERE plugins_access_level = 6',
    );
    await queryRunner.query('ALTER TABLE organizations ALTER COLUMN plugins_access_level SET DEFAULT 9');
    await queryRunner.query(`
      ALTER TABLE plugin_configs
        DROP COLUMN pinned_config_schema,
        DROP COLUMN pinned_site_code,
        DROP COLUMN pinned_code,
        DROP COLUMN code_pinned_at`);
  }
}
