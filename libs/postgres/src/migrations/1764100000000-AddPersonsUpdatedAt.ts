import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `updated_at`, which persons batch exports select by, kept by a trigger so every writer is covered.
 * Existing rows get the migration's time: the next persons export sends them all once.
 */
export class AddPersonsUpdatedAt1764100000000 implements MigrationInterface {
  name = 'AddPersonsUpdatedAt1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE persons ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()`);
    await queryRunner.query(
      `ALTER TABLE person_distinct_ids ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()`,
    );

    // TRICKY: clock_timestamp(), not now() (the transaction's start): a run reads an interval
    // BATCH_EXPORT_LAG_SECONDS after its end; stamping close to the commit leaves only the rest of the
    // transaction as the window for a change to miss its run.
    await queryRunner.query(`
      CREATE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.updated_at := clock_timestamp();
        RETURN NEW;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER persons_set_updated_at BEFORE INSERT OR UPDATE ON persons
        FOR EACH ROW EXECUTE FUNCTION set_updated_at()`);
    await queryRunner.query(`
      CREATE TRIGGER person_distinct_ids_set_updated_at BEFORE INSERT OR UPDATE ON person_distinct_ids
        FOR EACH ROW EXECUTE FUNCTION set_updated_at()`);

    // "A project's rows changed in [start, end)", in the export's order: distinct ids by
    // (updated_at, distinct_id), the run's cursor; persons by updated_at, then their distinct ids.
    await queryRunner.query(
      `CREATE INDEX person_distinct_ids_team_updated_idx ON person_distinct_ids (team_id, updated_at, distinct_id)`,
    );
    await queryRunner.query(`CREATE INDEX persons_team_updated_idx ON persons (team_id, updated_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX persons_team_updated_idx`);
    await queryRunner.query(`DROP INDEX person_distinct_ids_team_updated_idx`);
    await queryRunner.query(`DROP TRIGGER person_distinct_ids_set_updated_at ON person_distinct_ids`);
    await queryRunner.query(`DROP TRIGGER persons_set_updated_at ON persons`);
    await queryRunner.query(`DROP FUNCTION set_updated_at()`);
    await queryRunner.query(`ALTER TABLE person_distinct_ids DROP COLUMN updated_at`);
    await queryRunner.query(`ALTER TABLE persons DROP COLUMN updated_at`);
  }
}
