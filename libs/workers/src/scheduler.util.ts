import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { intervalStart, nextIntervalStart, type BatchExportInterval } from '@hogbase/batch-exports';

/** So that two workers never create the same runs at once. */
const SCHEDULER_LOCK_KEY = 7_345_022;
/** An export unpaused with backfill after months catches up over ticks. */
const MAX_INTERVALS_PER_TICK = 500;

interface ScheduledExport {
  id: string;
  interval: BatchExportInterval;
  start_at: Date | null;
  end_at: Date | null;
  scheduled_until: Date | null;
  timezone: string;
}

/** Safe from every worker: one at a time schedules, and a run per (export, interval end) is unique. */
export async function scheduleDueRuns(pool: Pool, now: Date): Promise<number> {
  const client = await pool.connect();
  let created = 0;
  try {
    await client.query('BEGIN');
    const { rows: locked } = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock($1) AS locked',
      [SCHEDULER_LOCK_KEY],
    );
    if (!locked[0].locked) {
      await client.query('COMMIT');
      return 0;
    }
    const { rows } = await client.query<ScheduledExport>(
      `SELECT export.id, export.interval, export.start_at, export.end_at, export.scheduled_until, team.timezone
         FROM batch_exports AS export JOIN teams AS team ON team.id = export.team_id
        WHERE NOT export.deleted AND NOT export.paused`,
    );
    for (const batchExport of rows) created += await scheduleExport(client, batchExport, now);
    await client.query('COMMIT');
    return created;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function scheduleExport(client: PoolClient, batchExport: ScheduledExport, now: Date): Promise<number> {
  const { interval, timezone } = batchExport;
  // Null: starts with the interval in progress now (or the one start_at falls in, if later).
  const from =
    batchExport.scheduled_until ??
    intervalStart(
      interval,
      timezone,
      batchExport.start_at && batchExport.start_at > now ? batchExport.start_at : now,
    );
  let start = from;
  let created = 0;
  for (let count = 0; count < MAX_INTERVALS_PER_TICK; count++) {
    if (batchExport.end_at && start >= batchExport.end_at) break;
    const end = nextIntervalStart(interval, timezone, start);
    if (end > now) break;
    const inserted = await client.query(
      `INSERT INTO batch_export_runs (id, batch_export_id, status, data_interval_start, data_interval_end)
       VALUES ($1, $2, 'Starting', $3, $4)
       ON CONFLICT (batch_export_id, data_interval_end) WHERE backfill_id IS NULL DO NOTHING`,
      [uuidv7(), batchExport.id, start, end],
    );
    created += inserted.rowCount ?? 0;
    start = end;
  }
  if (batchExport.scheduled_until?.getTime() !== start.getTime()) {
    await client.query('UPDATE batch_exports SET scheduled_until = $2 WHERE id = $1', [
      batchExport.id,
      start,
    ]);
  }
  return created;
}

export async function runsToEnqueue(
  pool: Pool,
  limit = 1_000,
): Promise<{ id: string; dataIntervalEnd: Date }[]> {
  const { rows } = await pool.query<{ id: string; data_interval_end: Date }>(
    `SELECT id, data_interval_end FROM batch_export_runs
      WHERE enqueued_at IS NULL AND status = 'Starting' ORDER BY created_at LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({ id: row.id, dataIntervalEnd: row.data_interval_end }));
}

export async function markEnqueued(pool: Pool, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query('UPDATE batch_export_runs SET enqueued_at = now() WHERE id = ANY($1)', [ids]);
}
