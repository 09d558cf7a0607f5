import type { User } from '@hogbase/postgres';

/** PostHog's UserBasic, embedded wherever another resource names a user. */
export interface UserBasicResponse {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
  is_email_verified: boolean;
  hedgehog_config: Record<string, unknown> | null;
  role_at_organization: string | null;
}

export function presentUserBasic(user: User): UserBasicResponse {
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.distinctId,
    first_name: user.firstName,
    last_name: user.lastName,
    email: user.email,
    is_email_verified: user.isEmailVerified,
    hedgehog_config: user.hedgehogConfig,
    role_at_organization: null,
  };
}
