import { sanitizeText } from '../shared/postgres-text.util';

/** `person_distinct_ids.distinct_id` is varchar(400). */
export const MAX_DISTINCT_ID_LENGTH = 400;

// PostHog refuses to merge on these ids: they come from bugs (an unset variable stringified), not
// from users (nodejs/src/worker/ingestion/persons/person-merge-service.ts). Some are illegal in any
// case, others only as written: `NaN` is refused, `nan` is not; `undefined` in any case is.
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

/** True for the ids PostHog never merges on (blank, `anonymous`, `null`, `0`, ...). */
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

/**
 * A distinct id as it will be stored: stringified the way PostHog does (`String(value)`), with
 * what Postgres text cannot hold replaced, so that the id read back equals the id looked up.
 */
export function normalizeDistinctId(value: unknown): string {
  return sanitizeText(String(value));
}
