import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a person or a distinct id last changed: what a persons batch export selects its rows by.
 *
 * A trigger keeps `updated_at` current on every insert and update, so every writer (ingestion's
 * upserts, merges moving distinct ids, anything later) is covered without knowing about it.
 * Existing rows get the time of the migration: the next run of a persons export sends them all once.
 */
export class AddPersonsUpdatedAt1764100000000 implements MigrationInterface {
  name = 'AddPersonsUpdatedAt1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE persons ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()`);
    await queryRunner.query(
      `ALTER TABLE person_distinct_ids ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()`,
    );

    // TRICKY: clock_timestamp(), not now() (the transaction's start): a run reads an interval
    // BATCH_EXPORT_LAG_SECONDS after its end, so a change must be visible by then to be exported.
    // Stamping at the write, close to the commit, leaves only the rest of the transaction as the
    // window in which a change could be stamped inside an interval and committed after its run read it.
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
