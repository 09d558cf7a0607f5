import { ApiProperty } from '@nestjs/swagger';
import type { ProjectSecretApiKey } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';

/** PostHog's ProjectSecretAPIKeySerializer, field for field. */
@ApiModel('ProjectSecretAPIKey')
export class ProjectSecretApiKeyResponse {
  @ApiProperty()
  id!: string;

  @ApiProperty()
  label!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The key itself (phs_): only in the answers to create and roll, null everywhere else',
  })
  value!: string | null;

  @ApiProperty()
  mask_value!: string;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  created_by!: UserBasicResponse | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  last_used_at!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  last_rolled_at!: string | null;

  @ApiProperty({ type: [String], example: ['feature_flag:read'] })
  scopes!: string[];
}

export function presentProjectSecretApiKey(
  key: ProjectSecretApiKey,
  value: string | null = null,
): ProjectSecretApiKeyResponse {
  return {
    id: key.id,
    label: key.label,
    value,
    mask_value: key.maskValue,
    created_at: iso(key.createdAt),
    created_by: key.createdBy ? presentUserBasic(key.createdBy) : null,
    last_used_at: iso(key.lastUsedAt),
    last_rolled_at: iso(key.lastRolledAt),
    scopes: key.scopes,
  };
}
