import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pipeline apps (PostHog's plugins): the app (per organization, or global), its source files, the
 * per-project configs (secret values sealed), their attachments, storage and logs, and hourly
 * delivery counts. Teams gain `inject_web_apps` (posthog-js loads the project's site apps).
 */
export class CreatePipelineApps1764200000000 implements MigrationInterface {
  name = 'CreatePipelineApps1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE teams ADD COLUMN inject_web_apps boolean NOT NULL DEFAULT false');

    await queryRunner.query(`
      CREATE TABLE plugins (
        id serial PRIMARY KEY,
        organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
        plugin_type varchar(32),
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        url text,
        url_with_secrets text,
        icon text,
        config_schema jsonb NOT NULL DEFAULT '[]',
        tag text,
        latest_tag text,
        latest_tag_checked_at timestamptz,
        is_global boolean NOT NULL DEFAULT false,
        is_stateless boolean NOT NULL DEFAULT false,
        capabilities jsonb NOT NULL DEFAULT '{}',
        metrics jsonb NOT NULL DEFAULT '{}',
        public_jobs jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // "Plugin from URL … already installed!": one installation of a URL per organization.
    await queryRunner.query(
      'CREATE UNIQUE INDEX plugins_organization_url ON plugins (organization_id, url) WHERE url IS NOT NULL',
    );

    await queryRunner.query(`
      CREATE TABLE plugin_source_files (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        plugin_id integer NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
        filename text NOT NULL,
        source text,
        transpiled text,
        status varchar(20),
        error text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (plugin_id, filename)
      )`);

    // web_token: the unguessable part of a site app's URL.
    await queryRunner.query(`
      CREATE TABLE plugin_configs (
        id serial PRIMARY KEY,
        plugin_id integer NOT NULL REFERENCES plugins (id) ON DELETE CASCADE,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        enabled boolean NOT NULL DEFAULT false,
        "order" integer NOT NULL DEFAULT 0,
        config jsonb NOT NULL DEFAULT '{}',
        error jsonb,
        web_token varchar(64) NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX plugin_configs_team_enabled ON plugin_configs (team_id, "order", id) WHERE enabled AND NOT deleted',
    );
    await queryRunner.query('CREATE INDEX plugin_configs_plugin ON plugin_configs (plugin_id)');

    await queryRunner.query(`
      CREATE TABLE plugin_attachments (
        id serial PRIMARY KEY,
        plugin_config_id integer NOT NULL REFERENCES plugin_configs (id) ON DELETE CASCADE,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        key text NOT NULL,
        content_type text NOT NULL,
        file_name text NOT NULL,
        file_size integer NOT NULL,
        contents bytea NOT NULL,
        UNIQUE (plugin_config_id, key)
      )`);

    // meta.storage: JSON values per config and key.
    await queryRunner.query(`
      CREATE TABLE plugin_storage (
        plugin_config_id integer NOT NULL REFERENCES plugin_configs (id) ON DELETE CASCADE,
        key text NOT NULL,
        value jsonb NOT NULL,
        PRIMARY KEY (plugin_config_id, key)
      )`);

    // PostHog's plugin log entry: source SYSTEM | PLUGIN | CONSOLE, type DEBUG | LOG | INFO | WARN | ERROR.
    await queryRunner.query(`
      CREATE TABLE plugin_log_entries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        plugin_config_id integer NOT NULL REFERENCES plugin_configs (id) ON DELETE CASCADE,
        plugin_id integer NOT NULL,
        team_id integer NOT NULL,
        timestamp timestamptz NOT NULL DEFAULT clock_timestamp(),
        source varchar(20) NOT NULL,
        type varchar(20) NOT NULL,
        message text NOT NULL,
        instance_id text NOT NULL DEFAULT ''
      )`);
    await queryRunner.query(
      'CREATE INDEX plugin_log_entries_config_time ON plugin_log_entries (plugin_config_id, timestamp DESC)',
    );

    // Destination deliveries per config and hour: what delivery_rate_24h and the failure figures read.
    await queryRunner.query(`
      CREATE TABLE plugin_delivery_stats (
        plugin_config_id integer NOT NULL REFERENCES plugin_configs (id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        succeeded bigint NOT NULL DEFAULT 0,
        failed bigint NOT NULL DEFAULT 0,
        last_error text,
        last_error_at timestamptz,
        PRIMARY KEY (plugin_config_id, hour)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE plugin_delivery_stats');
    await queryRunner.query('DROP TABLE plugin_log_entries');
    await queryRunner.query('DROP TABLE plugin_storage');
    await queryRunner.query('DROP TABLE plugin_attachments');
    await queryRunner.query('DROP TABLE plugin_configs');
    await queryRunner.query('DROP TABLE plugin_source_files');
    await queryRunner.query('DROP TABLE plugins');
    await queryRunner.query('ALTER TABLE teams DROP COLUMN inject_web_apps');
  }
}
