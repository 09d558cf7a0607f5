import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BATCH_EXPORT_RUN_STATUSES } from '@hogbase/postgres';
import type { BatchExport, BatchExportRun, BatchExportRunStatus } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ANY_JSON, ApiModel, DATE_TIME, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';
import { publicConfig, SUPPORTED_DESTINATIONS } from './batch-export-destinations.validator';
import { BATCH_EXPORT_INTERVALS, BATCH_EXPORT_MODELS } from './batch-export.dto';

@ApiModel('BatchExportRun')
export class BatchExportRunResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: BATCH_EXPORT_RUN_STATUSES })
  status!: BatchExportRunStatus;

  @ApiProperty({ type: 'integer', minimum: 0 })
  records_completed!: number;

  @ApiProperty({ type: String, nullable: true })
  latest_error!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  data_interval_start!: string | null;

  @ApiProperty(DATE_TIME)
  data_interval_end!: string;

  @ApiProperty({ type: String, nullable: true })
  cursor!: string | null;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  finished_at!: string | null;

  @ApiProperty(DATE_TIME)
  last_updated_at!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  records_total_count!: number | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  bytes_exported!: number;

  @ApiProperty({ format: 'uuid', description: 'The id of its batch export' })
  batch_export!: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The backfill it belongs to, if any',
  })
  backfill!: string | null;
}

@ApiModel('BatchExportDestination')
export class BatchExportDestinationResponse {
  @ApiProperty({ enum: SUPPORTED_DESTINATIONS })
  type!: string;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description: 'The destination settings, without its secrets (keys, passwords, tokens)',
  })
  config!: Record<string, unknown>;
}

@ApiModel('BatchExport')
export class BatchExportResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: 'integer' })
  team_id!: number;

  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: BATCH_EXPORT_MODELS })
  model!: string;

  @ApiProperty({ type: () => BatchExportDestinationResponse })
  destination!: BatchExportDestinationResponse;

  @ApiProperty({ enum: BATCH_EXPORT_INTERVALS })
  interval!: string;

  @ApiProperty()
  paused!: boolean;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty(DATE_TIME)
  last_updated_at!: string;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  last_paused_at!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  start_at!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  end_at!: string | null;

  @ApiProperty({ type: () => BatchExportRunResponse, isArray: true, description: 'The newest runs' })
  latest_runs!: BatchExportRunResponse[];

  @ApiProperty({ type: String, nullable: true })
  hogql_query!: string | null;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    nullable: true,
    description: "The exported columns of hogql_query's SELECT",
  })
  schema!: Record<string, unknown> | null;

  @ApiProperty({ ...ANY_JSON, description: 'Stored as given' })
  filters!: unknown;
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

@ApiModel('BatchExportBackfillProgress')
export class BackfillProgressResponse {
  @ApiProperty({ type: 'integer', minimum: 0 })
  total_runs!: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  finished_runs!: number;

  @ApiProperty({ minimum: 0, maximum: 1, description: 'The share of runs finished, 0 to 1' })
  progress!: number;
}

@ApiModel('BatchExportBackfill')
export class BackfillResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid', description: 'The id of its batch export' })
  batch_export!: string;

  @ApiProperty({ type: 'integer' })
  team_id!: number;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  start_at!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  end_at!: string | null;

  @ApiProperty({ enum: BATCH_EXPORT_RUN_STATUSES })
  status!: BatchExportRunStatus;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  finished_at!: string | null;

  @ApiProperty(DATE_TIME)
  last_updated_at!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The number of runs (intervals) it made' })
  total_runs!: number | null;

  @ApiProperty({
    type: () => BackfillProgressResponse,
    nullable: true,
    description: 'While starting, running or completed; null once failed or cancelled',
  })
  progress!: BackfillProgressResponse | null;
}

/** The body of `backfills/` (and the deprecated `backfill/`): checked by the handler. */
@ApiModel('BatchExportBackfillRequest')
export class BackfillRequest {
  @ApiPropertyOptional({
    ...DATE_TIME,
    nullable: true,
    description: "With an offset; from the project's first event when omitted",
  })
  start_at?: string | null;

  @ApiPropertyOptional({
    ...DATE_TIME,
    nullable: true,
    description: 'With an offset; until now when omitted',
  })
  end_at?: string | null;
}

/** What `backfills/` and `runs/:id/retry/` answer: the backfill that runs the intervals. */
@ApiModel('BatchExportBackfillCreated')
export class BackfillCreatedResponse {
  @ApiProperty({ format: 'uuid' })
  backfill_id!: string;
}

@ApiModel('BatchExportRunCancelled')
export class RunCancelledResponse {
  @ApiProperty({ enum: [true] })
  cancelled!: true;
}

@ApiModel('BatchExportLogEntry')
export class BatchExportLogEntryResponse {
  @ApiProperty(DATE_TIME)
  timestamp!: string;

  @ApiProperty({ description: 'DEBUG, INFO, WARNING or ERROR' })
  level!: string;

  @ApiProperty()
  message!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The run it is about, if any' })
  run_id!: string | null;
}

/** The newest log lines of an export (at most 500). */
@ApiModel('BatchExportLogs')
export class BatchExportLogsResponse {
  @ApiProperty({ type: () => BatchExportLogEntryResponse, isArray: true })
  results!: BatchExportLogEntryResponse[];
}
