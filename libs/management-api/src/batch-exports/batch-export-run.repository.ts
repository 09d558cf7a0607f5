import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { BatchExportLogEntry, BatchExportRun, type BatchExportRunStatus } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** Runs per INSERT: at 8 columns a row, far below Postgres's 65,535 bind parameters a statement. */
const RUNS_PER_INSERT = 1_000;

/** Where a page of runs ends: the last run's creation time and id. */
export interface RunPosition {
  createdAt: Date;
  runId: string;
}

/** The runs of batch exports and the log lines written about the exports and their runs. */
@Injectable()
export class BatchExportRunRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The newest `limit` runs of each export, newest first, in one query. */
  async latestOf(batchExportIds: string[], limit: number): Promise<Map<string, BatchExportRun[]>> {
    const byExport = new Map<string, BatchExportRun[]>();
    if (batchExportIds.length === 0) return byExport;
    const runs = await this.unitOfWork
      .repository(BatchExportRun)
      .createQueryBuilder('run')
      .where(
        `run.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY batch_export_id ORDER BY created_at DESC, id DESC) AS n
           FROM batch_export_runs WHERE batch_export_id = ANY(:ids)) ranked WHERE n <= :limit)`,
        { ids: batchExportIds, limit },
      )
      .orderBy('run.created_at', 'DESC')
      .addOrderBy('run.id', 'DESC')
      .getMany();
    for (const run of runs) {
      const list = byExport.get(run.batchExportId) ?? [];
      list.push(run);
      byExport.set(run.batchExportId, list);
    }
    return byExport;
  }

  /** Newest first: `take` runs of an export created before `after` (from the start without it). */
  page(batchExportId: string, after: RunPosition | undefined, take: number): Promise<BatchExportRun[]> {
    const query = this.unitOfWork
      .repository(BatchExportRun)
      .createQueryBuilder('run')
      .where('run.batch_export_id = :id', { id: batchExportId })
      .orderBy('run.created_at', 'DESC')
      .addOrderBy('run.id', 'DESC')
      .take(take);
    if (after) query.andWhere('(run.created_at, run.id) < (:createdAt, :runId)', after);
    return query.getMany();
  }

  findInExport(batchExportId: string, id: string): Promise<BatchExportRun | null> {
    return this.unitOfWork.repository(BatchExportRun).findOneBy({ id, batchExportId });
  }

  statusOf(id: string): Promise<BatchExportRunStatus> {
    return this.unitOfWork
      .repository(BatchExportRun)
      .findOneByOrFail({ id })
      .then((run) => run.status);
  }

  async insertAll(runs: Partial<BatchExportRun>[]): Promise<void> {
    for (let offset = 0; offset < runs.length; offset += RUNS_PER_INSERT) {
      await this.unitOfWork.repository(BatchExportRun).insert(runs.slice(offset, offset + RUNS_PER_INSERT));
    }
  }

  /** Marks the run Cancelled if its status is one of `from`; false when it is not (any more). */
  async cancel(id: string, from: readonly BatchExportRunStatus[]): Promise<boolean> {
    const updated = await this.unitOfWork
      .repository(BatchExportRun)
      .createQueryBuilder()
      .update()
      .set({ status: 'Cancelled', finishedAt: () => 'now()', lastUpdatedAt: () => 'now()' })
      .where('id = :id AND status IN (:...statuses)', { id, statuses: from })
      .execute();
    return Boolean(updated.affected);
  }

  /** How many runs of each backfill have a status of `finished`. */
  async countByBackfill(
    backfillIds: string[],
    finished: readonly BatchExportRunStatus[],
  ): Promise<Map<string, number>> {
    if (backfillIds.length === 0) return new Map();
    const counts = await this.unitOfWork
      .repository(BatchExportRun)
      .createQueryBuilder('run')
      .select('run.backfill_id', 'backfill')
      .addSelect('count(*) FILTER (WHERE run.status IN (:...finished))', 'finished')
      .where({ backfillId: In(backfillIds) })
      .setParameter('finished', finished)
      .groupBy('run.backfill_id')
      .getRawMany<{ backfill: string; finished: string }>();
    return new Map(counts.map((row) => [row.backfill, Number(row.finished)]));
  }

  async log(batchExportId: string, runId: string | null, level: string, message: string): Promise<void> {
    await this.unitOfWork.repository(BatchExportLogEntry).insert({ batchExportId, runId, level, message });
  }

  /** The newest `take` log lines of an export and its runs, newest first. */
  newestLogs(batchExportId: string, take: number): Promise<BatchExportLogEntry[]> {
    return this.unitOfWork.repository(BatchExportLogEntry).find({
      where: { batchExportId },
      order: { timestamp: 'DESC', id: 'DESC' },
      take,
    });
  }
}
