import { MigrationInterface, QueryRunner } from 'typeorm';

/** Persons, distinct ids, group types and groups: ingestion writes them with raw SQL. */
export class CreatePersonsAndGroups1763800000000 implements MigrationInterface {
  name = 'CreatePersonsAndGroups1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // NOTE: the unique (team_id, uuid) constraint is also the index for "person by team + uuid".
    await queryRunner.query(`
      CREATE TABLE persons (
        id bigserial PRIMARY KEY,
        uuid uuid NOT NULL,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        properties jsonb NOT NULL DEFAULT '{}'::jsonb,
        properties_last_updated_at jsonb NOT NULL DEFAULT '{}'::jsonb,
        properties_last_operation jsonb NOT NULL DEFAULT '{}'::jsonb,
        is_identified boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        version bigint NOT NULL DEFAULT 0,
        CONSTRAINT persons_team_uuid_key UNIQUE (team_id, uuid)
      )`);

    // The primary key (team_id, distinct_id) serves ingestion's lookups; the person_id index serves
    // "all distinct ids of a person" (listing, merges moving every id of the merged-away person).
    await queryRunner.query(`
      CREATE TABLE person_distinct_ids (
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        distinct_id varchar(400) NOT NULL,
        person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
        version bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (team_id, distinct_id)
      )`);
    await queryRunner.query(`CREATE INDEX person_distinct_ids_person_idx ON person_distinct_ids (person_id)`);

    await queryRunner.query(`
      CREATE TABLE group_type_mappings (
        id serial PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        group_type varchar(400) NOT NULL,
        group_type_index smallint NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
        CONSTRAINT group_type_mappings_team_type_key UNIQUE (team_id, group_type),
        CONSTRAINT group_type_mappings_team_index_key UNIQUE (team_id, group_type_index)
      )`);

    await queryRunner.query(`
      CREATE TABLE groups (
        id bigserial PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        group_type_index smallint NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
        group_key varchar(400) NOT NULL,
        group_properties jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        version bigint NOT NULL DEFAULT 0,
        CONSTRAINT groups_team_type_key_key UNIQUE (team_id, group_type_index, group_key),
        CONSTRAINT groups_group_type_fkey FOREIGN KEY (team_id, group_type_index)
          REFERENCES group_type_mappings (team_id, group_type_index) ON DELETE CASCADE
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE groups`);
    await queryRunner.query(`DROP TABLE group_type_mappings`);
    await queryRunner.query(`DROP TABLE person_distinct_ids`);
    await queryRunner.query(`DROP TABLE persons`);
  }
}
