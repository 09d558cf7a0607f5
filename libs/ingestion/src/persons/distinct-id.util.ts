import { sanitizeText } from '../shared/postgres-text.util';

/** `person_distinct_ids.distinct_id` is varchar(400). */
export const MAX_DISTINCT_ID_LENGTH = 400;

// PostHog refuses to merge on these ids, which come from bugs (nodejs/src/worker/ingestion/persons/
// person-merge-service.ts): some in any case, others only as written (`NaN` is refused, `nan` is not).
const BARE_CASE_INSENSITIVE_ILLEGAL_IDS = [
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
];
const BARE_CASE_SENSITIVE_ILLEGAL_IDS = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined'];

// Seen in the wild wrapped in quotes, so the quoted forms are illegal too.
const withQuotedForms = (ids: readonly string[]): Set<string> =>
  new Set(ids.flatMap((id) => [id, `'${id}'`, `"${id}"`]));

const CASE_INSENSITIVE_ILLEGAL_IDS = withQuotedForms(BARE_CASE_INSENSITIVE_ILLEGAL_IDS);
const CASE_SENSITIVE_ILLEGAL_IDS = withQuotedForms(BARE_CASE_SENSITIVE_ILLEGAL_IDS);

export function isDistinctIdIllegal(distinctId: string): boolean {
  return (
    distinctId.trim() === '' ||
    CASE_INSENSITIVE_ILLEGAL_IDS.has(distinctId.toLowerCase()) ||
    CASE_SENSITIVE_ILLEGAL_IDS.has(distinctId)
  );
}

/** Postgres counts characters (code points); JavaScript's length counts UTF-16 units. */
export function exceedsDistinctIdLength(distinctId: string): boolean {
  if (distinctId.length <= MAX_DISTINCT_ID_LENGTH) return false;
  let codePoints = 0;
  for (const _ of distinctId) {
    codePoints += 1;
    if (codePoints > MAX_DISTINCT_ID_LENGTH) return true;
  }
  return false;
}

/** Stringified as PostHog does, with what Postgres text cannot hold replaced: read back, it matches. */
export function normalizeDistinctId(value: unknown): string {
  return sanitizeText(String(value));
}
