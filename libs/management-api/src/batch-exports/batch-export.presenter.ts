import type { BatchExport, BatchExportRun } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { publicConfig } from './batch-export-destinations';

export interface BatchExportRunResponse {
  id: string;
  status: string;
  records_completed: number;
  latest_error: string | null;
  data_interval_start: string | null;
  data_interval_end: string;
  cursor: string | null;
  created_at: string;
  finished_at: string | null;
  last_updated_at: string;
  records_total_count: number | null;
  bytes_exported: number;
  batch_export: string;
  backfill: string | null;
}

export interface BatchExportResponse {
  id: string;
  team_id: number;
  name: string;
  model: string;
  destination: { type: string; config: Record<string, unknown> };
  interval: string;
  paused: boolean;
  created_at: string;
  last_updated_at: string;
  last_paused_at: string | null;
  start_at: string | null;
  end_at: string | null;
  latest_runs: BatchExportRunResponse[];
  hogql_query: string | null;
  schema: Record<string, unknown> | null;
  filters: unknown;
}

export function presentRun(run: BatchExportRun): BatchExportRunResponse {
  return {
    id: run.id,
    status: run.status,
    records_completed: run.recordsCompleted,
    latest_error: run.latestError,
    data_interval_start: iso(run.dataIntervalStart),
    data_interval_end: iso(run.dataIntervalEnd),
    cursor: run.cursor,
    created_at: iso(run.createdAt),
    finished_at: iso(run.finishedAt),
    last_updated_at: iso(run.lastUpdatedAt),
    records_total_count: run.recordsTotalCount,
    bytes_exported: Number(run.bytesExported),
    batch_export: run.batchExportId,
    backfill: run.backfillId,
  };
}

/** `config` is the opened destination config; what may be a secret is left out (publicConfig). */
export function presentBatchExport(
  batchExport: BatchExport,
  config: Record<string, unknown>,
  latestRuns: BatchExportRun[],
): BatchExportResponse {
  return {
    id: batchExport.id,
    team_id: batchExport.teamId,
    name: batchExport.name,
    model: batchExport.model,
    destination: {
      type: batchExport.destinationType,
      config: publicConfig(config),
    },
    interval: batchExport.interval,
    paused: batchExport.paused,
    created_at: iso(batchExport.createdAt),
    last_updated_at: iso(batchExport.lastUpdatedAt),
    last_paused_at: iso(batchExport.lastPausedAt),
    start_at: iso(batchExport.startAt),
    end_at: iso(batchExport.endAt),
    latest_runs: latestRuns.map(presentRun),
    hogql_query: batchExport.hogqlQuery,
    schema: batchExport.schema,
    filters: batchExport.filters ?? null,
  };
}
