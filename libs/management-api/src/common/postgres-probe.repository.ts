import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../persistence/unit-of-work.service';

@Injectable()
export class PostgresProbeRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Resolves when Postgres answers a query. */
  async ping(): Promise<void> {
    await this.unitOfWork.manager.query('SELECT 1');
  }
}
