import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { openTransactionManager } from '@hogbase/postgres';

/**
 * The one way management code reaches Postgres. Repositories read `manager`, which is the open
 * transaction's inside `run` and the pool's outside it, so a service composes repositories into one
 * transaction without passing a manager down, and a repository cannot query on a second connection
 * while its caller holds a transaction (which would deadlock the embedded Postgres).
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
