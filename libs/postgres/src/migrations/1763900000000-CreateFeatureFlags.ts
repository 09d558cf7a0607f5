import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Feature flags with roles and flag access, the activity log, cohorts, usage dashboards, and the
 * hash-key overrides that keep a person's variant across identify (experience continuity).
 */
export class CreateFeatureFlags1763900000000 implements MigrationInterface {
  name = 'CreateFeatureFlags1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE dashboards (
        id serial PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        name varchar(400) NOT NULL,
        description text NOT NULL DEFAULT '',
        tiles jsonb NOT NULL DEFAULT '[]'::jsonb,
        has_enriched_analytics boolean NOT NULL DEFAULT false,
        deleted boolean NOT NULL DEFAULT false,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    // A key is unique among a project's live flags; a soft-deleted flag keeps its key until a new
    // flag takes it (PostHog hard-deletes the old row then).
    await queryRunner.query(`
      CREATE TABLE feature_flags (
        id serial PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        key varchar(400) NOT NULL,
        name text NOT NULL DEFAULT '',
        filters jsonb NOT NULL DEFAULT '{}'::jsonb,
        rollout_percentage integer,
        deleted boolean NOT NULL DEFAULT false,
        active boolean NOT NULL DEFAULT true,
        ensure_experience_continuity boolean NOT NULL DEFAULT false,
        rollback_conditions jsonb,
        performed_rollback boolean,
        tags text[] NOT NULL DEFAULT '{}',
        usage_dashboard_id integer REFERENCES dashboards (id) ON DELETE SET NULL,
        analytics_dashboards integer[] NOT NULL DEFAULT '{}',
        has_enriched_analytics boolean NOT NULL DEFAULT false,
        version integer NOT NULL DEFAULT 1,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX feature_flags_team_key_live_key ON feature_flags (team_id, key) WHERE NOT deleted`,
    );
    await queryRunner.query(
      `CREATE INDEX feature_flags_team_created_idx ON feature_flags (team_id, created_at DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE roles (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        feature_flags_access_level smallint NOT NULL DEFAULT 37,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX roles_organization_name_key ON roles (organization_id, lower(name))`,
    );

    await queryRunner.query(`
      CREATE TABLE role_memberships (
        id uuid PRIMARY KEY,
        role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        joined_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT role_memberships_role_user_key UNIQUE (role_id, user_id)
      )`);

    await queryRunner.query(`
      CREATE TABLE feature_flag_role_access (
        id serial PRIMARY KEY,
        feature_flag_id integer NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
        role_id uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
        added_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT feature_flag_role_access_flag_role_key UNIQUE (feature_flag_id, role_id)
      )`);

    await queryRunner.query(`
      CREATE TABLE organization_resource_access (
        id serial PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        resource varchar(32) NOT NULL,
        access_level smallint NOT NULL DEFAULT 37,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT organization_resource_access_org_resource_key UNIQUE (organization_id, resource)
      )`);

    await queryRunner.query(`
      CREATE TABLE activity_log (
        id uuid PRIMARY KEY,
        organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
        team_id integer REFERENCES teams (id) ON DELETE CASCADE,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        is_system boolean NOT NULL DEFAULT false,
        scope varchar(79) NOT NULL,
        item_id varchar(72),
        activity varchar(79) NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX activity_log_team_scope_item_idx ON activity_log (team_id, scope, item_id, created_at DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE cohorts (
        id serial PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        name varchar(400) NOT NULL DEFAULT '',
        description varchar(1000) NOT NULL DEFAULT '',
        filters jsonb NOT NULL DEFAULT '{}'::jsonb,
        is_static boolean NOT NULL DEFAULT false,
        is_calculating boolean NOT NULL DEFAULT false,
        deleted boolean NOT NULL DEFAULT false,
        count integer,
        last_calculation timestamptz,
        version integer,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE cohort_people (
        cohort_id integer NOT NULL REFERENCES cohorts (id) ON DELETE CASCADE,
        person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
        PRIMARY KEY (cohort_id, person_id)
      )`);
    await queryRunner.query(`CREATE INDEX cohort_people_person_idx ON cohort_people (person_id)`);

    // Experience continuity: the distinct id a person's flags hash on, recorded the first time an
    // identified person is seen with its anonymous id.
    await queryRunner.query(`
      CREATE TABLE feature_flag_hash_key_overrides (
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        person_id bigint NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
        feature_flag_key varchar(400) NOT NULL,
        hash_key varchar(400) NOT NULL,
        PRIMARY KEY (team_id, person_id, feature_flag_key)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'feature_flag_hash_key_overrides',
      'cohort_people',
      'cohorts',
      'activity_log',
      'organization_resource_access',
      'feature_flag_role_access',
      'role_memberships',
      'roles',
      'feature_flags',
      'dashboards',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
