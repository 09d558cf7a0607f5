import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an app's API body declares (`declared_*`, shown until its code is inspected again) kept apart
 * from what inspection found (`capabilities`, `metrics`: all the runtime reads); `created_through`
 * keeps an app in its collection. NOTE: existing body values in `capabilities` stay until the next upgrade.
 */
export class AddDeclaredPluginFields1764490000000 implements MigrationInterface {
  name = 'AddDeclaredPluginFields1764490000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE plugins
        ADD COLUMN declared_capabilities jsonb,
        ADD COLUMN declared_metrics jsonb,
        ADD COLUMN created_through varchar(32)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE plugins
        DROP COLUMN declared_capabilities,
        DROP COLUMN declared_metrics,
        DROP COLUMN created_through`);
  }
}
