import type { DataSource } from 'typeorm';
import {
  generatePersonalApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
  PersonalApiKey,
  type User,
} from '@hogbase/postgres';
import type { AccessContext } from '../auth/access.decorator';

export interface KeyRestrictions {
  scopes?: string[] | null;
  scopedTeams?: number[] | null;
  scopedOrganizations?: string[] | null;
}

/** A personal API key of `user`, stored as the API stores one; returns it with its value. */
export async function seedPersonalApiKey(
  dataSource: DataSource,
  user: User,
  { scopes = null, scopedTeams = null, scopedOrganizations = null }: KeyRestrictions = {},
): Promise<{ apiKey: PersonalApiKey; value: string }> {
  const value = generatePersonalApiKey();
  const keys = dataSource.getRepository(PersonalApiKey);
  const apiKey = await keys.save(
    keys.create({
      id: generateRandomId(),
      userId: user.id,
      label: 'spec key',
      secureValue: hashPersonalApiKey(value),
      maskValue: maskApiKey(value),
      scopes,
      scopedTeams,
      scopedOrganizations,
      lastUsedAt: null,
      lastRolledAt: null,
    }),
  );
  return { apiKey, value };
}

/** What the access guard resolves for `user` calling with a key narrowed by `restrictions`. */
export async function callerOf(
  dataSource: DataSource,
  user: User,
  restrictions: KeyRestrictions = {},
): Promise<AccessContext> {
  const { apiKey } = await seedPersonalApiKey(dataSource, user, restrictions);
  return { user, apiKey };
}
