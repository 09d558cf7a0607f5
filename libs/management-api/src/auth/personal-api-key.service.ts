import { Injectable } from '@nestjs/common';
import { hashPersonalApiKey, type PersonalApiKey, type User } from '@hogbase/postgres';
import { PersonalApiKeyRepository } from './personal-api-key.repository';

const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000;

@Injectable()
export class PersonalApiKeyService {
  constructor(private readonly keys: PersonalApiKeyRepository) {}

  /** The key and its active user, or undefined; only the hash of the presented key is looked up. */
  async authenticate(presentedKey: string): Promise<{ apiKey: PersonalApiKey; user: User } | undefined> {
    const apiKey = await this.keys.findBySecureValue(hashPersonalApiKey(presentedKey));
    if (!apiKey?.user?.isActive) return undefined;
    await this.touch(apiKey);
    return { apiKey, user: apiKey.user };
  }

  /** PostHog writes last_used_at at most once an hour per key, to keep auth from writing on every call. */
  private async touch(apiKey: PersonalApiKey): Promise<void> {
    const now = new Date();
    if (apiKey.lastUsedAt && now.getTime() - apiKey.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    await this.keys.markUsed(apiKey.id, now);
    apiKey.lastUsedAt = now;
  }
}
