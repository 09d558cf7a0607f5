import { Injectable } from '@nestjs/common';
import { PersonalApiKey } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export type NewPersonalApiKeyRow = Pick<
  PersonalApiKey,
  'id' | 'userId' | 'label' | 'secureValue' | 'maskValue' | 'scopes' | 'scopedOrganizations' | 'scopedTeams'
>;

/** Personal API keys: the guard authenticates with them, the operator issues and revokes them. */
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

  countOfUser(userId: number): Promise<number> {
    return this.unitOfWork.repository(PersonalApiKey).countBy({ userId });
  }

  async insert(row: NewPersonalApiKeyRow): Promise<void> {
    await this.unitOfWork.repository(PersonalApiKey).insert(row);
  }

  /** Whether a key with this hash existed. */
  async deleteBySecureValue(secureValue: string): Promise<boolean> {
    const result = await this.unitOfWork.repository(PersonalApiKey).delete({ secureValue });
    return (result.affected ?? 0) > 0;
  }
}
