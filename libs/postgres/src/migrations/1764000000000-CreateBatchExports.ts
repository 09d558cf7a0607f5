import { MigrationInterface, QueryRunner } from 'typeorm';

/** Batch exports (destination config sealed), their runs (one per data interval), backfills and run logs. */
export class CreateBatchExports1764000000000 implements MigrationInterface {
  name = 'CreateBatchExports1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE batch_exports (
        id uuid PRIMARY KEY,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        name text NOT NULL,
        model varchar(16) NOT NULL DEFAULT 'events',
        destination_type varchar(32) NOT NULL,
        destination_config text NOT NULL,
        interval varchar(32) NOT NULL,
        paused boolean NOT NULL DEFAULT false,
        deleted boolean NOT NULL DEFAULT false,
        last_paused_at timestamptz,
        start_at timestamptz,
        end_at timestamptz,
        hogql_query text,
        schema jsonb,
        filters jsonb,
        scheduled_until timestamptz,
        created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX batch_exports_team_live ON batch_exports (team_id, created_at DESC) WHERE NOT deleted',
    );

    await queryRunner.query(`
      CREATE TABLE batch_export_backfills (
        id uuid PRIMARY KEY,
        batch_export_id uuid NOT NULL REFERENCES batch_exports (id) ON DELETE CASCADE,
        team_id integer NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        start_at timestamptz,
        end_at timestamptz,
        status varchar(32) NOT NULL DEFAULT 'Starting',
        total_runs integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        last_updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX batch_export_backfills_export ON batch_export_backfills (batch_export_id, created_at DESC)',
    );

    // One scheduled run per interval, whoever schedules it (several workers race with
    // INSERT … ON CONFLICT DO NOTHING); backfill and retry runs are extra rows of their own.
    await queryRunner.query(`
      CREATE TABLE batch_export_runs (
        id uuid PRIMARY KEY,
        batch_export_id uuid NOT NULL REFERENCES batch_exports (id) ON DELETE CASCADE,
        backfill_id uuid REFERENCES batch_export_backfills (id) ON DELETE CASCADE,
        status varchar(32) NOT NULL DEFAULT 'Starting',
        records_completed integer NOT NULL DEFAULT 0,
        records_total_count integer,
        bytes_exported bigint NOT NULL DEFAULT 0,
        latest_error text,
        data_interval_start timestamptz,
        data_interval_end timestamptz NOT NULL,
        cursor text,
        attempts integer NOT NULL DEFAULT 0,
        enqueued_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        last_updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX batch_export_runs_export ON batch_export_runs (batch_export_id, created_at DESC)',
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX batch_export_runs_scheduled_interval
         ON batch_export_runs (batch_export_id, data_interval_end) WHERE backfill_id IS NULL`,
    );
    await queryRunner.query('CREATE INDEX batch_export_runs_backfill ON batch_export_runs (backfill_id)');
    await queryRunner.query(
      'CREATE INDEX batch_export_runs_to_enqueue ON batch_export_runs (created_at) WHERE enqueued_at IS NULL',
    );

    await queryRunner.query(`
      CREATE TABLE batch_export_log_entries (
        id bigserial PRIMARY KEY,
        batch_export_id uuid NOT NULL REFERENCES batch_exports (id) ON DELETE CASCADE,
        run_id uuid REFERENCES batch_export_runs (id) ON DELETE CASCADE,
        level varchar(16) NOT NULL,
        message text NOT NULL,
        timestamp timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX batch_export_log_entries_export ON batch_export_log_entries (batch_export_id, timestamp DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE batch_export_log_entries');
    await queryRunner.query('DROP TABLE batch_export_runs');
    await queryRunner.query('DROP TABLE batch_export_backfills');
    await queryRunner.query('DROP TABLE batch_exports');
  }
}
