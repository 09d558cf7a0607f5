import { Injectable } from '@nestjs/common';
import { Plugin } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/**
 * The one write on apps the operator makes and no key reaches: whether an app is global. A narrow
 * copy of what the pipeline apps' repository does, until their module exports it.
 */
@Injectable()
export class AppGlobalRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findApp(id: number): Promise<Plugin | null> {
    return this.unitOfWork.repository(Plugin).findOneBy({ id });
  }

  async setGlobal(id: number, isGlobal: boolean): Promise<void> {
    await this.unitOfWork.repository(Plugin).update({ id }, { isGlobal });
  }
}
