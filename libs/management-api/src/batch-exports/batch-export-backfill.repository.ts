import { Injectable } from '@nestjs/common';
import { BatchExportBackfill, refreshBackfillStatus } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

@Injectable()
export class BatchExportBackfillRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  async insert(fields: Partial<BatchExportBackfill>): Promise<BatchExportBackfill> {
    const repository = this.unitOfWork.repository(BatchExportBackfill);
    const backfill = repository.create(fields);
    await repository.insert(backfill);
    return backfill;
  }

  /** The newest `take` of an export, newest first. */
  newest(batchExportId: string, take: number): Promise<BatchExportBackfill[]> {
    return this.unitOfWork.repository(BatchExportBackfill).find({
      where: { batchExportId },
      order: { createdAt: 'DESC', id: 'DESC' },
      take,
    });
  }

  findInExport(batchExportId: string, id: string): Promise<BatchExportBackfill | null> {
    return this.unitOfWork.repository(BatchExportBackfill).findOneBy({ id, batchExportId });
  }

  /** Recomputes its status from its runs, as the workers do when a run ends. */
  refreshStatus(id: string): Promise<void> {
    return refreshBackfillStatus((sql, params) => this.unitOfWork.manager.query(sql, params), id);
  }
}
