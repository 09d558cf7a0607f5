import { Injectable } from '@nestjs/common';
import { Not } from 'typeorm';
import { ProjectSecretApiKey } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export type ProjectSecretApiKeyChanges = Partial<
  Pick<ProjectSecretApiKey, 'label' | 'scopes' | 'secureValue' | 'maskValue' | 'lastRolledAt'>
>;

/** Every query names the project: a key of another project is never found. */
@Injectable()
export class ProjectSecretApiKeyRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Newest first, with who created each. */
  listInProject(teamId: number, page: PageRequest): Promise<[ProjectSecretApiKey[], number]> {
    return this.unitOfWork.repository(ProjectSecretApiKey).findAndCount({
      where: { teamId },
      relations: { createdBy: true },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** The key with who created it; `lock` holds its row until the transaction ends. */
  async findInProject(
    teamId: number,
    id: string,
    { lock = false }: { lock?: boolean } = {},
  ): Promise<ProjectSecretApiKey | null> {
    const repository = this.unitOfWork.repository(ProjectSecretApiKey);
    if (lock) {
      // FOR UPDATE cannot apply to the nullable side of the created_by join: lock the row alone first.
      const locked = await repository.findOne({ where: { id, teamId }, lock: { mode: 'pessimistic_write' } });
      if (!locked) return null;
    }
    return repository.findOne({ where: { id, teamId }, relations: { createdBy: true } });
  }

  /** Whether another key of the project has this label. */
  labelTaken(teamId: number, label: string, exceptId?: string): Promise<boolean> {
    return this.unitOfWork
      .repository(ProjectSecretApiKey)
      .existsBy({ teamId, label, ...(exceptId === undefined ? {} : { id: Not(exceptId) }) });
  }

  countInProject(teamId: number): Promise<number> {
    return this.unitOfWork.repository(ProjectSecretApiKey).countBy({ teamId });
  }

  async insert(
    key: Pick<
      ProjectSecretApiKey,
      'id' | 'teamId' | 'label' | 'scopes' | 'secureValue' | 'maskValue' | 'createdById'
    >,
  ): Promise<void> {
    await this.unitOfWork.repository(ProjectSecretApiKey).insert(key);
  }

  async update(id: string, changes: ProjectSecretApiKeyChanges): Promise<void> {
    await this.unitOfWork.repository(ProjectSecretApiKey).update({ id }, changes);
  }

  /** Whether a key was deleted. */
  async deleteInProject(teamId: number, id: string): Promise<boolean> {
    const result = await this.unitOfWork.repository(ProjectSecretApiKey).delete({ id, teamId });
    return Boolean(result.affected);
  }
}
