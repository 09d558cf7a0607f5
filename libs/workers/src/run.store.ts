import type { Pool } from 'pg';
import { refreshBackfillStatus } from '@hogbase/postgres';

export interface LoadedRun {
  id: string;
  batchExportId: string;
  backfillId: string | null;
  status: string;
  dataIntervalStart: Date | null;
  dataIntervalEnd: Date;
  cursor: string | null;
  recordsCompleted: number;
  bytesExported: number;
  attempts: number;
  export: {
    teamId: number;
    model: 'events' | 'persons';
    destinationType: string;
    /** Sealed by the SecretBox. */
    destinationConfig: string;
    schema: { hogql_query?: string } | null;
    /** Events captured from then on may arrive late (run-query.util.ts). */
    createdAt: Date;
  };
}

export interface PendingRun {
  id: string;
  dataIntervalEnd: Date;
}

/** A restarted job finds its run Running. */
const CLAIMABLE = ['Starting', 'Running', 'FailedRetryable'];

/** Every update names the status it expects: a run cancelled through the API is never marked otherwise. */
export class RunStore {
  constructor(private readonly pool: Pool) {}

  /** Undefined when it is not to run. */
  async claim(runId: string): Promise<LoadedRun | undefined> {
    const { rows } = await this.pool.query<{
      id: string;
      batch_export_id: string;
      backfill_id: string | null;
      status: string;
      data_interval_start: Date | null;
      data_interval_end: Date;
      cursor: string | null;
      records_completed: number;
      bytes_exported: string;
      attempts: number;
      team_id: number;
      model: 'events' | 'persons';
      destination_type: string;
      destination_config: string;
      schema: { hogql_query?: string } | null;
      created_at: Date;
    }>(
      `UPDATE batch_export_runs AS run
          SET status = 'Running', attempts = run.attempts + 1, last_updated_at = now()
         FROM batch_exports AS export
        WHERE run.id = $1 AND export.id = run.batch_export_id AND NOT export.deleted
          AND run.status = ANY($2)
        RETURNING run.id, run.batch_export_id, run.backfill_id, run.status, run.data_interval_start,
                  run.data_interval_end, run.cursor, run.records_completed, run.bytes_exported, run.attempts,
                  export.team_id, export.model, export.destination_type, export.destination_config, export.schema,
                  export.created_at`,
      [runId, CLAIMABLE],
    );
    const row = rows[0];
    if (!row) return undefined;
    await this.touchBackfill(row.backfill_id);
    return {
      id: row.id,
      batchExportId: row.batch_export_id,
      backfillId: row.backfill_id,
      status: row.status,
      dataIntervalStart: row.data_interval_start,
      dataIntervalEnd: row.data_interval_end,
      cursor: row.cursor,
      recordsCompleted: row.records_completed,
      bytesExported: Number(row.bytes_exported),
      attempts: row.attempts,
      export: {
        teamId: row.team_id,
        model: row.model,
        destinationType: row.destination_type,
        destinationConfig: row.destination_config,
        schema: row.schema,
        createdAt: row.created_at,
      },
    };
  }

  async locate(runId: string): Promise<{ batchExportId: string; dataIntervalEnd: Date } | undefined> {
    const { rows } = await this.pool.query<{ batch_export_id: string; data_interval_end: Date }>(
      'SELECT batch_export_id, data_interval_end FROM batch_export_runs WHERE id = $1',
      [runId],
    );
    return rows[0] && { batchExportId: rows[0].batch_export_id, dataIntervalEnd: rows[0].data_interval_end };
  }

  async setTotal(runId: string, total: number): Promise<void> {
    await this.pool.query(
      `UPDATE batch_export_runs SET records_total_count = $2, last_updated_at = now() WHERE id = $1 AND status = 'Running'`,
      [runId, total],
    );
  }

  /** False when the run is no longer Running (cancelled). */
  async saveProgress(
    runId: string,
    progress: { cursor: string | null; recordsCompleted: number; bytesExported: number },
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE batch_export_runs
          SET cursor = $2, records_completed = $3, bytes_exported = $4, last_updated_at = now()
        WHERE id = $1 AND status = 'Running'`,
      [runId, progress.cursor, progress.recordsCompleted, progress.bytesExported],
    );
    return rowCount === 1;
  }

  async stillRunning(runId: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ status: string }>(
      'SELECT status FROM batch_export_runs WHERE id = $1',
      [runId],
    );
    return rows[0]?.status === 'Running';
  }

  /** Also brings the backfill's status up to date. */
  async finish(
    runId: string,
    outcome: {
      status: 'Completed' | 'Failed' | 'FailedRetryable';
      error?: string;
      /** Completing objects adds their trailers. */
      bytesExported?: number;
    },
  ): Promise<void> {
    const ended = outcome.status !== 'FailedRetryable';
    const { rows } = await this.pool.query<{ backfill_id: string | null }>(
      `UPDATE batch_export_runs
          SET status = $2, latest_error = $3, finished_at = CASE WHEN $4 THEN now() ELSE finished_at END,
              bytes_exported = coalesce($5, bytes_exported), last_updated_at = now()
        WHERE id = $1 AND status IN ('Running', 'FailedRetryable')
        RETURNING backfill_id`,
      [runId, outcome.status, outcome.error ?? null, ended, outcome.bytesExported ?? null],
    );
    await this.touchBackfill(rows[0]?.backfill_id ?? null);
  }

  async log(
    batchExportId: string,
    runId: string | null,
    level: 'info' | 'warn' | 'error',
    message: string,
  ): Promise<void> {
    await this.pool.query(
      'INSERT INTO batch_export_log_entries (batch_export_id, run_id, level, message) VALUES ($1, $2, $3, $4)',
      [batchExportId, runId, level, message],
    );
  }

  private async touchBackfill(backfillId: string | null): Promise<void> {
    if (backfillId) await refreshBackfillStatus((sql, params) => this.pool.query(sql, params), backfillId);
  }
}
