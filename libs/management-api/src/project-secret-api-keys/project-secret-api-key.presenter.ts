import type { ProjectSecretApiKey } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { presentUserBasic, type UserBasicResponse } from '../users/user.presenter';

/** PostHog's ProjectSecretAPIKeySerializer, field for field. */
export interface ProjectSecretApiKeyResponse {
  id: string;
  label: string;
  /** The key itself: only in the answers to create and roll, null everywhere else. */
  value: string | null;
  mask_value: string;
  created_at: string;
  created_by: UserBasicResponse | null;
  last_used_at: string | null;
  last_rolled_at: string | null;
  scopes: string[];
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
