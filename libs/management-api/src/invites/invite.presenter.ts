import type { MembershipLevel, OrganizationInvite } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentUserBasic, UserBasicResponse } from '../users/user.presenter';

export const INVITE_VALIDITY_DAYS = 3;
const INVITE_VALIDITY_MS = INVITE_VALIDITY_DAYS * 24 * 60 * 60 * 1000;

export interface InviteResponse {
  id: string;
  target_email: string;
  first_name: string;
  emailing_attempt_made: boolean;
  level: MembershipLevel;
  is_expired: boolean;
  created_by: UserBasicResponse | null;
  created_at: string;
  updated_at: string;
  message: string | null;
  private_project_access: unknown[];
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
