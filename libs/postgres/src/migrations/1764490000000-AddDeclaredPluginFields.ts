import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an app's API body says about it, kept apart from what its code was found to do:
 * `declared_capabilities` and `declared_metrics` are shown (and decide the collections the app is
 * listed in) until the app's code is inspected again, while `capabilities` and `metrics` stay the
 * inspection's, the only ones the apps runtime reads. `created_through` is the collection an app
 * was created through, which keeps showing it whatever its capabilities become.
 *
 * NOTE: existing rows keep their columns as they are; a body value written into `capabilities`
 * before this migration stays there until the app's next install, source edit or upgrade.
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
