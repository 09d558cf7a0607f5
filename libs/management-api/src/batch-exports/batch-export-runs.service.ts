import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, type EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { intervalDuration, intervalsOverlapping, type BatchExportInterval } from '@hogbase/batch-exports';
import {
  BatchExport,
  BatchExportBackfill,
  BatchExportLogEntry,
  BatchExportRun,
  refreshBackfillStatus,
  Team,
} from '@hogbase/postgres';
import { ApiError, notFound, validationError } from '../common/api-error';
import { iso, isUuid } from '../common/iso.util';
import { EventStore } from '../events/event-store.service';
import type { BatchExportScope } from './batch-export.service';
import {
  type BackfillCreatedResponse,
  type BackfillResponse,
  type BatchExportLogsResponse,
  type BatchExportRunResponse,
  presentRun,
  type RunCancelledResponse,
} from './batch-export.presenter';

/** Runs of a backfill that have ended, one way or another. */
const FINISHED = ['Completed', 'Failed', 'Cancelled'];
const CANCELLABLE = ['Starting', 'Running', 'FailedRetryable'];
const RUNS_PAGE_SIZE = 100;
/**
 * Most intervals one backfill may cover. Its runs are made up front, in one transaction: a range of
 * centuries (a persons export has no first event to clamp its start to) spent minutes of the
 * process's only event loop listing them and gigabytes building one INSERT, and on the embedded
 * engine every other app of `npm start` stalled with it (a Schemathesis finding, issue 29).
 */
const MAX_BACKFILL_INTERVALS = 10_000;
/** Runs per INSERT: at 8 columns a row, far below Postgres's 65,535 bind parameters a statement. */
const RUNS_PER_INSERT = 1_000;
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

/** `YYYY-MM-DD HH:MM:SS`, the format of PostHog's earliest-date message. */
function pythonDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/** Backfills, runs and log lines of batch exports: what the workers execute, as the API shows it. */
@Injectable()
export class BatchExportRunsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventStore,
  ) {}

  /**
   * A backfill of `[start_at, end_at)`: one run per aligned interval that overlaps it, in the
   * project's time zone. A missing start means from the project's first event; a missing end, until
   * now. Runs of intervals still in progress wait for their end (the workers' rule). A range of more
   * than MAX_BACKFILL_INTERVALS intervals is refused (400).
   */
  async createBackfill(
    scope: BatchExportScope,
    id: string,
    body: { start_at?: unknown; end_at?: unknown },
  ): Promise<{ batchExport: BatchExport; backfill: BatchExportBackfill }> {
    let start = backfillDate(body.start_at, 'start_at');
    const end = backfillDate(body.end_at, 'end_at');
    const batchExport = await this.findExport(this.dataSource.manager, scope, id);
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
      const earliest = await this.earliestEvent(batchExport.teamId);
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
    // Estimated before they are listed, which is what must not run unbounded; the +1 is the
    // interval the start falls in.
    const covered = Math.ceil((until.getTime() - from.getTime()) / intervalDuration(interval)) + 1;
    if (covered > MAX_BACKFILL_INTERVALS) {
      throw validationError(
        `The backfill date range covers about ${covered} intervals of '${interval}': at most ${MAX_BACKFILL_INTERVALS} can be backfilled at once. Backfill a shorter range.`,
      );
    }
    const team = await this.dataSource.getRepository(Team).findOneByOrFail({ id: batchExport.teamId });
    const intervals = intervalsOverlapping(interval, team.timezone, from, until);

    const backfill = await this.dataSource.transaction(async (manager) => {
      const created = manager.getRepository(BatchExportBackfill).create({
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
      await manager.getRepository(BatchExportBackfill).insert(created);
      for (let offset = 0; offset < intervals.length; offset += RUNS_PER_INSERT) {
        await manager.getRepository(BatchExportRun).insert(
          intervals
            .slice(offset, offset + RUNS_PER_INSERT)
            .map(({ start: intervalStart, end: intervalEnd }) => ({
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
      }
      await this.log(
        manager,
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
    const batchExport = await this.findExport(this.dataSource.manager, scope, id);
    const backfills = await this.dataSource.getRepository(BatchExportBackfill).find({
      where: { batchExportId: batchExport.id },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: RUNS_PAGE_SIZE,
    });
    return { results: await this.presentBackfills(backfills) };
  }

  async retrieveBackfill(scope: BatchExportScope, id: string, backfillId: string): Promise<BackfillResponse> {
    const batchExport = await this.findExport(this.dataSource.manager, scope, id);
    if (!isUuid(backfillId)) throw notFound();
    const backfill = await this.dataSource
      .getRepository(BatchExportBackfill)
      .findOneBy({ id: backfillId, batchExportId: batchExport.id });
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
    const batchExport = await this.findExport(this.dataSource.manager, scope, id);
    const query = this.dataSource
      .getRepository(BatchExportRun)
      .createQueryBuilder('run')
      .where('run.batch_export_id = :id', { id: batchExport.id })
      .orderBy('run.created_at', 'DESC')
      .addOrderBy('run.id', 'DESC')
      .take(RUNS_PAGE_SIZE + 1);
    if (cursor) {
      const position = decodeCursor(cursor);
      query.andWhere('(run.created_at, run.id) < (:createdAt, :runId)', position);
    }
    const runs = await query.getMany();
    const page = runs.slice(0, RUNS_PAGE_SIZE);
    const last = page[page.length - 1];
    return {
      results: page.map(presentRun),
      nextCursor: runs.length > RUNS_PAGE_SIZE && last ? encodeCursor(last) : null,
    };
  }

  /** Runs that interval again, as a backfill of exactly it. */
  async retryRun(scope: BatchExportScope, id: string, runId: string): Promise<BackfillCreatedResponse> {
    const run = await this.findRun(scope, id, runId);
    const now = new Date();
    const backfillId = await this.dataSource.transaction(async (manager) => {
      const backfill = manager.getRepository(BatchExportBackfill).create({
        id: uuidv7(),
        batchExportId: run.batchExportId,
        teamId: (await this.findExport(manager, scope, id)).teamId,
        startAt: run.dataIntervalStart,
        endAt: run.dataIntervalEnd,
        status: 'Starting',
        totalRuns: 1,
        createdAt: now,
        finishedAt: null,
        lastUpdatedAt: now,
      });
      await manager.getRepository(BatchExportBackfill).insert(backfill);
      await manager.getRepository(BatchExportRun).insert({
        id: uuidv7(),
        batchExportId: run.batchExportId,
        backfillId: backfill.id,
        status: 'Starting',
        dataIntervalStart: run.dataIntervalStart,
        dataIntervalEnd: run.dataIntervalEnd,
        createdAt: now,
        lastUpdatedAt: now,
      });
      await this.log(manager, run.batchExportId, run.id, 'info', 'Retry requested');
      return backfill.id;
    });
    return { backfill_id: backfillId };
  }

  /** A run not ended yet is marked Cancelled; a worker running it stops at its next checkpoint. */
  async cancelRun(scope: BatchExportScope, id: string, runId: string): Promise<RunCancelledResponse> {
    const run = await this.findRun(scope, id, runId);
    const updated = await this.dataSource
      .getRepository(BatchExportRun)
      .createQueryBuilder()
      .update()
      .set({ status: 'Cancelled', finishedAt: () => 'now()', lastUpdatedAt: () => 'now()' })
      .where('id = :id AND status IN (:...statuses)', { id: run.id, statuses: CANCELLABLE })
      .execute();
    if (!updated.affected) {
      const current = await this.dataSource.getRepository(BatchExportRun).findOneByOrFail({ id: run.id });
      throw validationError(`Cannot cancel a run that is in '${current.status}' status`);
    }
    await this.log(this.dataSource.manager, run.batchExportId, run.id, 'info', 'Cancel requested');
    if (run.backfillId) {
      await refreshBackfillStatus((sql, params) => this.dataSource.query(sql, params), run.backfillId);
    }
    return { cancelled: true };
  }

  async logs(scope: BatchExportScope, id: string): Promise<BatchExportLogsResponse> {
    const batchExport = await this.findExport(this.dataSource.manager, scope, id);
    const entries = await this.dataSource.getRepository(BatchExportLogEntry).find({
      where: { batchExportId: batchExport.id },
      order: { timestamp: 'DESC', id: 'DESC' },
      take: LOGS_LIMIT,
    });
    return {
      results: entries.map((entry) => ({
        timestamp: iso(entry.timestamp),
        level: entry.level.toUpperCase(),
        message: entry.message,
        run_id: entry.runId,
      })),
    };
  }

  private async log(
    manager: EntityManager,
    batchExportId: string,
    runId: string | null,
    level: string,
    message: string,
  ): Promise<void> {
    await manager.getRepository(BatchExportLogEntry).insert({ batchExportId, runId, level, message });
  }

  private async earliestEvent(teamId: number): Promise<Date | null> {
    const [row] = await this.events.select<{ earliest: string | null }>(
      `SELECT if(count() = 0, NULL, toString(min(timestamp))) AS earliest FROM ${this.events.table} WHERE team_id = {teamId:Int64}`,
      { teamId },
    );
    return row?.earliest ? new Date(`${row.earliest.replace(' ', 'T')}Z`) : null;
  }

  private async presentBackfills(backfills: BatchExportBackfill[]): Promise<BackfillResponse[]> {
    const ids = backfills.map((backfill) => backfill.id);
    const counts = ids.length
      ? await this.dataSource
          .getRepository(BatchExportRun)
          .createQueryBuilder('run')
          .select('run.backfill_id', 'backfill')
          .addSelect('count(*) FILTER (WHERE run.status IN (:...finished))', 'finished')
          .where({ backfillId: In(ids) })
          .setParameter('finished', FINISHED)
          .groupBy('run.backfill_id')
          .getRawMany<{ backfill: string; finished: string }>()
      : [];
    const finishedOf = new Map(counts.map((row) => [row.backfill, Number(row.finished)]));
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

  private async findExport(
    manager: EntityManager,
    scope: BatchExportScope,
    id: string,
  ): Promise<BatchExport> {
    if (!isUuid(id) || scope.teamIds.length === 0) throw notFound();
    const batchExport = await manager
      .getRepository(BatchExport)
      .findOneBy({ id, teamId: In(scope.teamIds), deleted: false });
    if (!batchExport) throw notFound();
    return batchExport;
  }

  private async findRun(scope: BatchExportScope, id: string, runId: string): Promise<BatchExportRun> {
    const batchExport = await this.findExport(this.dataSource.manager, scope, id);
    if (!isUuid(runId)) throw notFound();
    const run = await this.dataSource
      .getRepository(BatchExportRun)
      .findOneBy({ id: runId, batchExportId: batchExport.id });
    if (!run) throw notFound();
    return run;
  }
}

function encodeCursor(run: BatchExportRun): string {
  return Buffer.from(`${run.createdAt.toISOString()}|${run.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; runId: string } {
  const [createdAt, runId] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const date = new Date(createdAt ?? '');
  if (Number.isNaN(date.getTime()) || !runId || !isUuid(runId)) {
    throw new ApiError('invalid_input', 'Invalid cursor', 'cursor');
  }
  return { createdAt: date, runId };
}
