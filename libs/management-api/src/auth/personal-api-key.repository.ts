import { Injectable } from '@nestjs/common';
import { PersonalApiKey } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

@Injectable()
export class PersonalApiKeyRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The key stored with this SHA-256, with its user. */
  findBySecureValue(secureValue: string): Promise<PersonalApiKey | null> {
    return this.unitOfWork.repository(PersonalApiKey).findOne({
      where: { secureValue },
      relations: { user: true },
    });
  }

  async markUsed(id: string, at: Date): Promise<void> {
    await this.unitOfWork.repository(PersonalApiKey).update({ id }, { lastUsedAt: at });
  }
}
