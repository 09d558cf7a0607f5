import { MigrationInterface, QueryRunner } from 'typeorm';

/** `meta.storage` budgets: each config's bytes, kept by a trigger so a write reads one row, not a sum. */
export class AddPluginStorageUsage1764470000000 implements MigrationInterface {
  name = 'AddPluginStorageUsage1764470000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE plugin_storage_usage (
        plugin_config_id integer PRIMARY KEY REFERENCES plugin_configs (id) ON DELETE CASCADE,
        bytes bigint NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`
      INSERT INTO plugin_storage_usage (plugin_config_id, bytes)
      SELECT plugin_config_id, sum(octet_length(key) + octet_length(value::text))
      FROM plugin_storage GROUP BY plugin_config_id`);
    // NOTE: a deleted config's rows cascade here too; its usage row may be gone already (also a
    // cascade), so the removal only updates, while an added row's config always exists.
    await queryRunner.query(`
      CREATE FUNCTION plugin_storage_count_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          UPDATE plugin_storage_usage
          SET bytes = bytes - octet_length(OLD.key) - octet_length(OLD.value::text)
          WHERE plugin_config_id = OLD.plugin_config_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO plugin_storage_usage (plugin_config_id, bytes)
          VALUES (NEW.plugin_config_id, octet_length(NEW.key) + octet_length(NEW.value::text))
          ON CONFLICT (plugin_config_id)
          DO UPDATE SET bytes = plugin_storage_usage.bytes + EXCLUDED.bytes;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER plugin_storage_count_bytes
      AFTER INSERT OR UPDATE OR DELETE ON plugin_storage
      FOR EACH ROW EXECUTE FUNCTION plugin_storage_count_bytes()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER plugin_storage_count_bytes ON plugin_storage');
    await queryRunner.query('DROP FUNCTION plugin_storage_count_bytes()');
    await queryRunner.query('DROP TABLE plugin_storage_usage');
  }
}
