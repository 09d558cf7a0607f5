import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A pinned config keeps its copy's capabilities: ingestion picks the apps it calls by the code each
 * config runs. NOTE: existing pins take the app's current ones (no history is kept).
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
