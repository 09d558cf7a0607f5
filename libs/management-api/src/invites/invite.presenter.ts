import { ApiProperty } from '@nestjs/swagger';
import { MEMBERSHIP_LEVELS } from '@hogbase/postgres';
import type { MembershipLevel, OrganizationInvite } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel, DATE_TIME, FREE_FORM_ARRAY } from '../schema/api-responses.decorator';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';

export const INVITE_VALIDITY_DAYS = 3;
const INVITE_VALIDITY_MS = INVITE_VALIDITY_DAYS * 24 * 60 * 60 * 1000;

@ApiModel('OrganizationInvite')
export class InviteResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  target_email!: string;

  @ApiProperty()
  first_name!: string;

  @ApiProperty()
  emailing_attempt_made!: boolean;

  @ApiProperty({ type: 'integer', enum: MEMBERSHIP_LEVELS, description: '1 member, 8 admin, 15 owner' })
  level!: MembershipLevel;

  @ApiProperty({ description: `Whether it is older than ${INVITE_VALIDITY_DAYS} days` })
  is_expired!: boolean;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  created_by!: UserBasicResponse | null;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;

  @ApiProperty({ type: String, nullable: true })
  message!: string | null;

  @ApiProperty({ ...FREE_FORM_ARRAY, description: 'Always empty: projects have no access control here' })
  private_project_access!: unknown[];
}

export function isInviteExpired(invite: OrganizationInvite, now = Date.now()): boolean {
  return invite.createdAt.getTime() < now - INVITE_VALIDITY_MS;
}

export function presentInvite(invite: OrganizationInvite): InviteResponse {
  return {
    id: invite.id,
    target_email: invite.targetEmail,
    first_name: invite.firstName,
    emailing_attempt_made: invite.emailingAttemptMade,
    level: invite.level,
    is_expired: isInviteExpired(invite),
    created_by: invite.createdBy ? presentUserBasic(invite.createdBy) : null,
    created_at: iso(invite.createdAt),
    updated_at: iso(invite.updatedAt),
    message: invite.message,
    private_project_access: [],
  };
}
