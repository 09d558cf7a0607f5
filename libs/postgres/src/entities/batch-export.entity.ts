import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

export type BatchExportModel = 'events' | 'persons';

/** PostHog's run statuses: Starting → Running → Completed | Failed | FailedRetryable | Cancelled. */
export const BATCH_EXPORT_RUN_STATUSES = [
  'Starting',
  'Running',
  'Completed',
  'Failed',
  'FailedRetryable',
  'Cancelled',
] as const;
export type BatchExportRunStatus = (typeof BATCH_EXPORT_RUN_STATUSES)[number];

@Entity('batch_exports')
export class BatchExport {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('text')
  name!: string;

  @Column('varchar', { length: 16, default: 'events' })
  model!: BatchExportModel;

  @Column('varchar', { name: 'destination_type', length: 32 })
  destinationType!: string;

  /** The destination's config as JSON, sealed by the SecretBox: never stored or logged in clear. */
  @Column('text', { name: 'destination_config' })
  destinationConfig!: string;

  @Column('varchar', { length: 32 })
  interval!: string;

  @Column('boolean', { default: false })
  paused!: boolean;

  @Column('boolean', { default: false })
  deleted!: boolean;

  @Column('timestamptz', { name: 'last_paused_at', nullable: true })
  lastPausedAt!: Date | null;

  @Column('timestamptz', { name: 'start_at', nullable: true })
  startAt!: Date | null;

  @Column('timestamptz', { name: 'end_at', nullable: true })
  endAt!: Date | null;

  @Column('text', { name: 'hogql_query', nullable: true })
  hogqlQuery!: string | null;

  @Column('jsonb', { nullable: true })
  schema!: Record<string, unknown> | null;

  @Column('jsonb', { nullable: true })
  filters!: unknown;

  /** The end of the last interval a scheduled run was created for (the scheduler's cursor). */
  @Column('timestamptz', { name: 'scheduled_until', nullable: true })
  scheduledUntil!: Date | null;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'last_updated_at', default: () => 'now()' })
  lastUpdatedAt!: Date;
}

@Entity('batch_export_backfills')
export class BatchExportBackfill {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'batch_export_id' })
  batchExportId!: string;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('timestamptz', { name: 'start_at', nullable: true })
  startAt!: Date | null;

  @Column('timestamptz', { name: 'end_at', nullable: true })
  endAt!: Date | null;

  @Column('varchar', { length: 32, default: 'Starting' })
  status!: BatchExportRunStatus;

  @Column('int', { name: 'total_runs', nullable: true })
  totalRuns!: number | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'finished_at', nullable: true })
  finishedAt!: Date | null;

  @Column('timestamptz', { name: 'last_updated_at', default: () => 'now()' })
  lastUpdatedAt!: Date;
}

@Entity('batch_export_runs')
export class BatchExportRun {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'batch_export_id' })
  batchExportId!: string;

  @Column('uuid', { name: 'backfill_id', nullable: true })
  backfillId!: string | null;

  @Column('varchar', { length: 32, default: 'Starting' })
  status!: BatchExportRunStatus;

  @Column('int', { name: 'records_completed', default: 0 })
  recordsCompleted!: number;

  @Column('int', { name: 'records_total_count', nullable: true })
  recordsTotalCount!: number | null;

  /** bigint: pg returns it as a decimal string. */
  @Column('bigint', { name: 'bytes_exported', default: 0 })
  bytesExported!: string;

  @Column('text', { name: 'latest_error', nullable: true })
  latestError!: string | null;

  @Column('timestamptz', { name: 'data_interval_start', nullable: true })
  dataIntervalStart!: Date | null;

  @Column('timestamptz', { name: 'data_interval_end' })
  dataIntervalEnd!: Date;

  @Column('text', { nullable: true })
  cursor!: string | null;

  @Column('int', { default: 0 })
  attempts!: number;

  /** When the workers handed the run to the job engine (null: not yet). */
  @Column('timestamptz', { name: 'enqueued_at', nullable: true })
  enqueuedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'finished_at', nullable: true })
  finishedAt!: Date | null;

  @Column('timestamptz', { name: 'last_updated_at', default: () => 'now()' })
  lastUpdatedAt!: Date;
}

@Entity('batch_export_log_entries')
export class BatchExportLogEntry {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  @Column('uuid', { name: 'batch_export_id' })
  batchExportId!: string;

  @Column('uuid', { name: 'run_id', nullable: true })
  runId!: string | null;

  @Column('varchar', { length: 16 })
  level!: string;

  @Column('text')
  message!: string;

  @Column('timestamptz', { default: () => 'now()' })
  timestamp!: Date;
}
