import { Global, Module } from '@nestjs/common';
import { UnitOfWork } from './unit-of-work.service';

/** The unit of work every repository reads its EntityManager from. */
@Global()
@Module({ providers: [UnitOfWork], exports: [UnitOfWork] })
export class PersistenceModule {}
