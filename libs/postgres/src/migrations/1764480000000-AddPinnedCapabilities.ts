import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A pinned config (another organization's app, `code_pinned_at` set) keeps the capabilities of its
 * copy of the code, taken with it: ingestion picks the projects whose apps it calls (`processEvent`,
 * `onEvent`, `composeWebhook`) by the code each config runs, and the app's current version may
 * export other methods than the pinned copy.
 *
 * NOTE: existing pins get the app's capabilities as they are now: the plugin keeps no history. A pin
 * whose code has changed since shows `code_update_available`, and its upgrade takes both again.
 */
export class AddPinnedCapabilities1764480000000 implements MigrationInterface {
  name = 'AddPinnedCapabilities1764480000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE plugin_configs ADD COLUMN pinned_capabilities jsonb');
    await queryRunner.query(`
      UPDATE plugin_configs c SET pinned_capabilities = p.capabilities
      FROM plugins p
      WHERE p.id = c.plugin_id AND c.code_pinned_at IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE plugin_configs DROP COLUMN pinned_capabilities');
  }
}
