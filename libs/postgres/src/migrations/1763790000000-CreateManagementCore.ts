import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateManagementCore1763790000000 implements MigrationInterface {
  name = 'CreateManagementCore1763790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id serial PRIMARY KEY,
        uuid uuid NOT NULL UNIQUE,
        distinct_id varchar(200) NOT NULL UNIQUE,
        first_name varchar(150) NOT NULL DEFAULT '',
        last_name varchar(150) NOT NULL DEFAULT '',
        email varchar(254) NOT NULL,
        is_email_verified boolean NOT NULL DEFAULT false,
        is_active boolean NOT NULL DEFAULT true,
        hedgehog_config jsonb,
        current_organization_id uuid,
        current_team_id integer,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email))`);

    await queryRunner.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY,
        name varchar(64) NOT NULL,
        slug varchar(48) NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        plugins_access_level smallint NOT NULL DEFAULT 9,
        is_member_join_email_enabled boolean NOT NULL DEFAULT true,
        enforce_2fa boolean,
        customer_id varchar(200),
        available_product_features jsonb NOT NULL DEFAULT '[]'::jsonb
      )`);

    await queryRunner.query(`
      CREATE TABLE organization_memberships (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        level smallint NOT NULL CHECK (level IN (1, 8, 15)),
        joined_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (organization_id, user_id)
      )`);
    await queryRunner.query(
      `CREATE INDEX organization_memberships_user_idx ON organization_memberships (user_id)`,
    );

    await queryRunner.query(`
      CREATE TABLE teams (
        id serial PRIMARY KEY,
        uuid uuid NOT NULL UNIQUE,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        api_token varchar(200) NOT NULL UNIQUE,
        timezone varchar(240) NOT NULL DEFAULT 'UTC',
        is_demo boolean NOT NULL DEFAULT false,
        anonymize_ips boolean NOT NULL DEFAULT false,
        completed_snippet_onboarding boolean NOT NULL DEFAULT false,
        ingested_event boolean NOT NULL DEFAULT false,
        app_urls text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX teams_organization_idx ON teams (organization_id)`);

    await queryRunner.query(`
      CREATE TABLE personal_api_keys (
        id varchar(50) PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        label varchar(40) NOT NULL,
        secure_value varchar(300) NOT NULL UNIQUE,
        mask_value varchar(11) NOT NULL,
        scopes text[],
        scoped_teams integer[],
        scoped_organizations text[],
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        last_rolled_at timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX personal_api_keys_user_idx ON personal_api_keys (user_id)`);

    await queryRunner.query(`
      CREATE TABLE organization_invites (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        target_email varchar(254) NOT NULL,
        first_name varchar(30) NOT NULL DEFAULT '',
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        emailing_attempt_made boolean NOT NULL DEFAULT false,
        level smallint NOT NULL DEFAULT 1 CHECK (level IN (1, 8, 15)),
        message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX organization_invites_org_email_idx ON organization_invites (organization_id, lower(target_email))`,
    );

    await queryRunner.query(`
      CREATE TABLE organization_domains (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        domain varchar(128) NOT NULL UNIQUE,
        verification_challenge varchar(128) NOT NULL,
        verified_at timestamptz,
        last_verification_retry timestamptz,
        jit_provisioning_enabled boolean NOT NULL DEFAULT false,
        sso_enforcement varchar(28) NOT NULL DEFAULT '',
        saml_entity_id varchar(512),
        saml_acs_url varchar(512),
        saml_x509_cert text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX organization_domains_org_idx ON organization_domains (organization_id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE organization_domains`);
    await queryRunner.query(`DROP TABLE organization_invites`);
    await queryRunner.query(`DROP TABLE personal_api_keys`);
    await queryRunner.query(`DROP TABLE teams`);
    await queryRunner.query(`DROP TABLE organization_memberships`);
    await queryRunner.query(`DROP TABLE organizations`);
    await queryRunner.query(`DROP TABLE users`);
  }
}
