import { Injectable } from '@nestjs/common';
import { PersonalApiKey } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export type NewPersonalApiKeyRow = Pick<
  PersonalApiKey,
  'id' | 'userId' | 'label' | 'secureValue' | 'maskValue' | 'scopes' | 'scopedOrganizations' | 'scopedTeams'
>;

/** Personal API keys as the operator issues and revokes them; the access guard reads them on its own. */
@Injectable()
export class PersonalApiKeyRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

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
