import { v5 as uuidv5 } from 'uuid';

/** PostHog's namespace for person UUIDs (nodejs/src/worker/ingestion/person-uuid.ts). */
export const PERSON_UUID_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22';

/** A person and the personless events of its distinct id agree on it without a lookup. */
export function personUuid(teamId: number, distinctId: string): string {
  return uuidv5(`${teamId}:${distinctId}`, PERSON_UUID_NAMESPACE);
}
