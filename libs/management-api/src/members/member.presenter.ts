import { ApiProperty } from '@nestjs/swagger';
import { MEMBERSHIP_LEVELS } from '@hogbase/postgres';
import type { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';

@ApiModel('OrganizationMember')
export class MemberResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: () => UserBasicResponse })
  user!: UserBasicResponse;

  @ApiProperty({ type: 'integer', enum: MEMBERSHIP_LEVELS, description: '1 member, 8 admin, 15 owner' })
  level!: MembershipLevel;

  @ApiProperty(DATE_TIME)
  joined_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;

  @ApiProperty({ description: 'Always false: keys are the only authentication here' })
  is_2fa_enabled!: boolean;

  @ApiProperty({ description: 'Always false: keys are the only authentication here' })
  has_social_auth!: boolean;

  @ApiProperty({ ...DATE_TIME, nullable: true, description: 'Always null: there is no login' })
  last_login!: string | null;
}

export function presentMember(membership: OrganizationMembership & { user: User }): MemberResponse {
  return {
    id: membership.id,
    user: presentUserBasic(membership.user),
    level: membership.level,
    joined_at: iso(membership.joinedAt),
    updated_at: iso(membership.updatedAt),
    // Authentication here is by API key only: no second factor or social login exists to report.
    is_2fa_enabled: false,
    has_social_auth: false,
    last_login: null,
  };
}
