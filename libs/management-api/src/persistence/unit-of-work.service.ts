import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { openTransactionManager } from '@hogbase/postgres';

/**
 * Repositories read `manager`: the open transaction's inside `run`, else the pool's. A second
 * connection while the caller holds a transaction would deadlock the embedded Postgres.
 */
@Injectable()
export class UnitOfWork {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  get manager(): EntityManager {
    return openTransactionManager() ?? this.dataSource.manager;
  }

  repository<Entity extends ObjectLiteral>(entity: EntityTarget<Entity>): Repository<Entity> {
    return this.manager.getRepository(entity);
  }

  /** Runs `work` in one transaction; called inside another unit of work, it joins that one. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (openTransactionManager()) return work();
    return this.dataSource.transaction(() => work());
  }
}
