import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { BatchExport } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

@Injectable()
export class BatchExportRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** A live (not deleted) export of one of `teamIds`; `lock` holds its row for the transaction. */
  findLive(id: string, teamIds: number[], lock = false): Promise<BatchExport | null> {
    return this.unitOfWork.repository(BatchExport).findOne({
      where: { id, teamId: In(teamIds), deleted: false },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  /** Newest first. */
  listLive(teamIds: number[], page: PageRequest): Promise<[BatchExport[], number]> {
    return this.unitOfWork.repository(BatchExport).findAndCount({
      where: { teamId: In(teamIds), deleted: false },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  create(fields: Partial<BatchExport>): BatchExport {
    return this.unitOfWork.repository(BatchExport).create(fields);
  }

  async save(batchExport: BatchExport): Promise<void> {
    await this.unitOfWork.repository(BatchExport).save(batchExport);
  }
}
