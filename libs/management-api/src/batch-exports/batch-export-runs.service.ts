import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { intervalDuration, intervalsOverlapping, type BatchExportInterval } from '@hogbase/batch-exports';
import type {
  BatchExport,
  BatchExportBackfill,
  BatchExportRun,
  BatchExportRunStatus,
} from '@hogbase/postgres';
import { ApiError, notFound, validationError } from '../common/api.error';
import { iso, isUuid } from '../common/iso.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import { BatchExportBackfillRepository } from './batch-export-backfill.repository';
import { BatchExportEventsRepository } from './batch-export-events.repository';
import { BatchExportRunRepository, type RunPosition } from './batch-export-run.repository';
import { BatchExportService, type BatchExportScope } from './batch-export.service';
import {
  type BackfillCreatedResponse,
  type BackfillResponse,
  type BatchExportLogsResponse,
  type BatchExportRunResponse,
  presentRun,
  type RunCancelledResponse,
} from './batch-export.presenter';

const FINISHED: readonly BatchExportRunStatus[] = ['Completed', 'Failed', 'Cancelled'];
const CANCELLABLE: readonly BatchExportRunStatus[] = ['Starting', 'Running', 'FailedRetryable'];
const RUNS_PAGE_SIZE = 100;
/**
 * A backfill's runs are made up front: a range of centuries would hold the event loop, which the
 * embedded engine shares with every other app of `npm start`.
 */
export const MAX_BACKFILL_INTERVALS = 10_000;
const LOGS_LIMIT = 500;

/** An ISO datetime with an offset, as PostHog's backfill takes it (a naive one is refused). */
function backfillDate(value: unknown, attr: string): Date | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const date = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?/.test(text)
    ? new Date(text)
    : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw validationError(`Input ${text} is not a valid ISO formatted datetime.`, attr);
  }
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(text)) throw validationError(`Input ${text} is naive.`, attr);
  return date;
}

/** The format of PostHog's earliest-date message. */
function pythonDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

@Injectable()
export class BatchExportRunsService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly exports: BatchExportService,
    private readonly projects: ProjectRepository,
    private readonly backfills: BatchExportBackfillRepository,
    private readonly runs: BatchExportRunRepository,
    private readonly events: BatchExportEventsRepository,
  ) {}

  /**
   * One run per aligned interval overlapping `[start_at, end_at)`, in the project's time zone; no
   * start means the first event, no end now.
   */
  async createBackfill(
    scope: BatchExportScope,
    id: string | null,
    body: { start_at?: unknown; end_at?: unknown },
  ): Promise<{ batchExport: BatchExport; backfill: BatchExportBackfill }> {
    let start = backfillDate(body.start_at, 'start_at');
    const end = backfillDate(body.end_at, 'end_at');
    const batchExport = await this.exports.find(scope, id);
    const interval = batchExport.interval as BatchExportInterval;
    const now = new Date();
    if (start && end && start >= end) {
      throw validationError("The initial backfill datetime 'start_at' happens after 'end_at'");
    }
    if (end && end.getTime() > now.getTime() + intervalDuration(interval)) {
      throw validationError(
        `The provided 'end_at' (${end.toISOString()}) is too far into the future. Cannot backfill beyond 1 batch period into the future.`,
      );
    }
    if (batchExport.model === 'events') {
      const earliest = await this.events.earliestEvent(batchExport.teamId);
      if (!earliest) throw validationError('There is no data to backfill for this model.');
      if (end && end <= earliest) {
        throw validationError(
          `The provided backfill date range contains no data. The earliest possible backfill start date is ${pythonDateTime(earliest)}`,
        );
      }
      if (!start || start < earliest) start = earliest;
    }
    const from = start ?? batchExport.createdAt;
    const until = end ?? now;
    // Counted before listing, which must not run unbounded; +1 for the interval the start falls in.
    const covered = Math.ceil((until.getTime() - from.getTime()) / intervalDuration(interval)) + 1;
    if (covered > MAX_BACKFILL_INTERVALS) {
      throw validationError(
        `The backfill date range covers about ${covered} intervals of '${interval}': at most ${MAX_BACKFILL_INTERVALS} can be backfilled at once. Backfill a shorter range.`,
      );
    }
    const timezone = await this.projects.timezoneOf(batchExport.teamId);
    const intervals = intervalsOverlapping(interval, timezone, from, until);

    const backfill = await this.unitOfWork.run(async () => {
      const created = await this.backfills.insert({
        id: uuidv7(),
        batchExportId: batchExport.id,
        teamId: batchExport.teamId,
        startAt: start,
        endAt: end,
        status: intervals.length === 0 ? 'Completed' : 'Starting',
        totalRuns: intervals.length,
        createdAt: now,
        finishedAt: intervals.length === 0 ? now : null,
        lastUpdatedAt: now,
      });
      await this.runs.insertAll(
        intervals.map(({ start: intervalStart, end: intervalEnd }) => ({
          id: uuidv7(),
          batchExportId: batchExport.id,
          backfillId: created.id,
          status: 'Starting' as const,
          dataIntervalStart: intervalStart,
          dataIntervalEnd: intervalEnd,
          createdAt: now,
          lastUpdatedAt: now,
        })),
      );
      await this.runs.log(
        batchExport.id,
        null,
        'info',
        `Backfill of ${intervals.length} intervals requested`,
      );
      return created;
    });
    return { batchExport, backfill };
  }

  async listBackfills(scope: BatchExportScope, id: string): Promise<{ results: BackfillResponse[] }> {
    const batchExport = await this.exports.find(scope, id);
    return {
      results: await this.presentBackfills(await this.backfills.newest(batchExport.id, RUNS_PAGE_SIZE)),
    };
  }

  async retrieveBackfill(scope: BatchExportScope, id: string, backfillId: string): Promise<BackfillResponse> {
    const batchExport = await this.exports.find(scope, id);
    const backfill = await this.backfills.findInExport(batchExport.id, backfillId);
    if (!backfill) throw notFound();
    const [response] = await this.presentBackfills([backfill]);
    return response;
  }

  /** Newest first, 100 a page; `cursor` is what the previous page's `next` carried. */
  async listRuns(
    scope: BatchExportScope,
    id: string,
    cursor: string | undefined,
  ): Promise<{ results: BatchExportRunResponse[]; nextCursor: string | null }> {
    const batchExport = await this.exports.find(scope, id);
    const runs = await this.runs.page(
      batchExport.id,
      cursor ? decodeCursor(cursor) : undefined,
      RUNS_PAGE_SIZE + 1,
    );
    const page = runs.slice(0, RUNS_PAGE_SIZE);
    const last = page[page.length - 1];
    return {
      results: page.map(presentRun),
      nextCursor: runs.length > RUNS_PAGE_SIZE && last ? encodeCursor(last) : null,
    };
  }

  async retryRun(scope: BatchExportScope, id: string, runId: string): Promise<BackfillCreatedResponse> {
    const run = await this.findRun(scope, id, runId);
    const now = new Date();
    const backfill = await this.unitOfWork.run(async () => {
      const created = await this.backfills.insert({
        id: uuidv7(),
        batchExportId: run.batchExportId,
        teamId: (await this.exports.find(scope, id)).teamId,
        startAt: run.dataIntervalStart,
        endAt: run.dataIntervalEnd,
        status: 'Starting',
        totalRuns: 1,
        createdAt: now,
        finishedAt: null,
        lastUpdatedAt: now,
      });
      await this.runs.insertAll([
        {
          id: uuidv7(),
          batchExportId: run.batchExportId,
          backfillId: created.id,
          status: 'Starting',
          dataIntervalStart: run.dataIntervalStart,
          dataIntervalEnd: run.dataIntervalEnd,
          createdAt: now,
          lastUpdatedAt: now,
        },
      ]);
      await this.runs.log(run.batchExportId, run.id, 'info', 'Retry requested');
      return created;
    });
    return { backfill_id: backfill.id };
  }

  /** A run not ended yet is marked Cancelled; a worker running it stops at its next checkpoint. */
  async cancelRun(scope: BatchExportScope, id: string, runId: string): Promise<RunCancelledResponse> {
    const run = await this.findRun(scope, id, runId);
    if (!(await this.runs.cancel(run.id, CANCELLABLE))) {
      const status = await this.runs.statusOf(run.id);
      throw validationError(`Cannot cancel a run that is in '${status}' status`);
    }
    await this.runs.log(run.batchExportId, run.id, 'info', 'Cancel requested');
    if (run.backfillId) await this.backfills.refreshStatus(run.backfillId);
    return { cancelled: true };
  }

  async logs(scope: BatchExportScope, id: string): Promise<BatchExportLogsResponse> {
    const batchExport = await this.exports.find(scope, id);
    const entries = await this.runs.newestLogs(batchExport.id, LOGS_LIMIT);
    return {
      results: entries.map((entry) => ({
        timestamp: iso(entry.timestamp),
        level: entry.level.toUpperCase(),
        message: entry.message,
        run_id: entry.runId,
      })),
    };
  }

  private async presentBackfills(backfills: BatchExportBackfill[]): Promise<BackfillResponse[]> {
    const finishedOf = await this.runs.countByBackfill(
      backfills.map((backfill) => backfill.id),
      FINISHED,
    );
    return backfills.map((backfill) => {
      const total = backfill.totalRuns ?? 1;
      const finished = finishedOf.get(backfill.id) ?? 0;
      const showsProgress = ['Starting', 'Running', 'Completed'].includes(backfill.status);
      return {
        id: backfill.id,
        batch_export: backfill.batchExportId,
        team_id: backfill.teamId,
        start_at: iso(backfill.startAt),
        end_at: iso(backfill.endAt),
        status: backfill.status,
        created_at: iso(backfill.createdAt),
        finished_at: iso(backfill.finishedAt),
        last_updated_at: iso(backfill.lastUpdatedAt),
        total_runs: backfill.totalRuns,
        progress: showsProgress
          ? {
              total_runs: total,
              finished_runs: finished,
              progress: backfill.status === 'Completed' ? 1 : total === 0 ? 1 : finished / total,
            }
          : null,
      };
    });
  }

  private async findRun(scope: BatchExportScope, id: string, runId: string): Promise<BatchExportRun> {
    const batchExport = await this.exports.find(scope, id);
    const run = await this.runs.findInExport(batchExport.id, runId);
    if (!run) throw notFound();
    return run;
  }
}

function encodeCursor(run: BatchExportRun): string {
  return Buffer.from(`${run.createdAt.toISOString()}|${run.id}`).toString('base64url');
}

function decodeCursor(cursor: string): RunPosition {
  const [createdAt, runId] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const date = new Date(createdAt ?? '');
  if (Number.isNaN(date.getTime()) || !runId || !isUuid(runId)) {
    throw new ApiError('invalid_input', 'Invalid cursor', 'cursor');
  }
  return { createdAt: date, runId };
}
