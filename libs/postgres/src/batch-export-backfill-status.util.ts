/**
 * Starting, Running, then Failed (one failed), Cancelled (none completed) or Completed. The API calls
 * it too when it cancels a run, since a cancelled run's worker may never look at it again.
 */
export async function refreshBackfillStatus(
  query: (sql: string, params: unknown[]) => Promise<unknown>,
  backfillId: string,
): Promise<void> {
  await query(
    `UPDATE batch_export_backfills AS backfill
        SET status = summary.status,
            finished_at = CASE WHEN summary.status IN ('Completed', 'Failed', 'Cancelled') THEN coalesce(backfill.finished_at, now()) END,
            last_updated_at = now()
       FROM (SELECT CASE
                      WHEN count(*) FILTER (WHERE status IN ('Starting', 'Running', 'FailedRetryable')) > 0
                        THEN CASE WHEN count(*) FILTER (WHERE status <> 'Starting') > 0 THEN 'Running' ELSE 'Starting' END
                      WHEN count(*) FILTER (WHERE status = 'Failed') > 0 THEN 'Failed'
                      WHEN count(*) FILTER (WHERE status = 'Completed') = 0 THEN 'Cancelled'
                      ELSE 'Completed'
                    END AS status
               FROM batch_export_runs WHERE backfill_id = $1) AS summary
      WHERE backfill.id = $1`,
    [backfillId],
  );
}
