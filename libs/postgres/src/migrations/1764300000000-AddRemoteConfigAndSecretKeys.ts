import { MigrationInterface, QueryRunner } from 'typeorm';

/** What capture caches per project: table, project column, the columns that matter (all when absent). */
const NOTIFYING_TABLES: ReadonlyArray<{ table: string; team: string; columns?: string[] }> = [
  { table: 'teams', team: 'id' },
  { table: 'feature_flags', team: 'team_id' },
  { table: 'plugin_configs', team: 'team_id' },
  // Not last_used_at, which capture itself writes hourly for a key in use.
  { table: 'project_secret_api_keys', team: 'team_id', columns: ['team_id', 'secure_value', 'scopes'] },
];

/** Tables shared by every project: a change concerns all of them (`*`). */
const NOTIFYING_SHARED_TABLES = ['plugins', 'plugin_source_files'];

/**
 * Remote-config settings (PostHog's names and defaults) and `project_secret_api_keys` (`phs_…`, kept as
 * SHA-256). A change to any row shaping a project's cached config notifies `hogbase_project_changed`
 * (payload: the project id, `*` for all), whoever wrote it, so capture drops its cache at commit.
 */
export class AddRemoteConfigAndSecretKeys1764300000000 implements MigrationInterface {
  name = 'AddRemoteConfigAndSecretKeys1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE teams
        ADD COLUMN autocapture_opt_out boolean NOT NULL DEFAULT false,
        ADD COLUMN autocapture_exceptions_opt_in boolean NOT NULL DEFAULT false,
        ADD COLUMN autocapture_web_vitals_opt_in boolean NOT NULL DEFAULT false,
        ADD COLUMN autocapture_web_vitals_allowed_metrics text[],
        ADD COLUMN capture_performance_opt_in boolean NOT NULL DEFAULT true,
        ADD COLUMN capture_console_log_opt_in boolean NOT NULL DEFAULT true,
        ADD COLUMN capture_dead_clicks boolean NOT NULL DEFAULT false,
        ADD COLUMN heatmaps_opt_in boolean NOT NULL DEFAULT false`);

    await queryRunner.query(`
      CREATE TABLE project_secret_api_keys (
        id varchar(50) PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        label varchar(40) NOT NULL,
        secure_value varchar(300) NOT NULL UNIQUE,
        mask_value varchar(11) NOT NULL,
        scopes text[] NOT NULL,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        last_rolled_at timestamptz,
        CONSTRAINT project_secret_api_keys_unique_team_label UNIQUE (team_id, label)
      )`);

    await queryRunner.query(`
      CREATE FUNCTION notify_project_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        team text;
      BEGIN
        IF TG_NARGS = 0 THEN
          team := '*';
        ELSIF TG_OP = 'DELETE' THEN
          team := to_jsonb(OLD) ->> TG_ARGV[0];
        ELSE
          team := to_jsonb(NEW) ->> TG_ARGV[0];
        END IF;
        PERFORM pg_notify('hogbase_project_changed', coalesce(team, '*'));
        RETURN NULL;
      END
      $$`);
    for (const { table, team, columns } of NOTIFYING_TABLES) {
      const update = columns ? `UPDATE OF ${columns.join(', ')}` : 'UPDATE';
      await queryRunner.query(`
        CREATE TRIGGER ${table}_notify_project_changed
          AFTER INSERT OR ${update} OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION notify_project_changed('${team}')`);
    }
    for (const table of NOTIFYING_SHARED_TABLES) {
      await queryRunner.query(`
        CREATE TRIGGER ${table}_notify_project_changed
          AFTER INSERT OR UPDATE OR DELETE ON ${table}
          FOR EACH STATEMENT EXECUTE FUNCTION notify_project_changed()`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const { table } of NOTIFYING_TABLES) {
      await queryRunner.query(`DROP TRIGGER ${table}_notify_project_changed ON ${table}`);
    }
    for (const table of NOTIFYING_SHARED_TABLES) {
      await queryRunner.query(`DROP TRIGGER ${table}_notify_project_changed ON ${table}`);
    }
    await queryRunner.query(`DROP FUNCTION notify_project_changed()`);
    await queryRunner.query(`DROP TABLE project_secret_api_keys`);
    await queryRunner.query(`
      ALTER TABLE teams
        DROP COLUMN autocapture_opt_out,
        DROP COLUMN autocapture_exceptions_opt_in,
        DROP COLUMN autocapture_web_vitals_opt_in,
        DROP COLUMN autocapture_web_vitals_allowed_metrics,
        DROP COLUMN capture_performance_opt_in,
        DROP COLUMN capture_console_log_opt_in,
        DROP COLUMN capture_dead_clicks,
        DROP COLUMN heatmaps_opt_in`);
  }
}
