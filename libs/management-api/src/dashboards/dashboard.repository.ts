import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { Dashboard } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

@Injectable()
export class DashboardRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findLive(id: number): Promise<Dashboard | null> {
    return this.unitOfWork.repository(Dashboard).findOneBy({ id, deleted: false });
  }

  insert(dashboard: DeepPartial<Dashboard>): Promise<Dashboard> {
    const repository = this.unitOfWork.repository(Dashboard);
    return repository.save(repository.create(dashboard));
  }

  save(dashboard: Dashboard): Promise<Dashboard> {
    return this.unitOfWork.repository(Dashboard).save(dashboard);
  }
}
