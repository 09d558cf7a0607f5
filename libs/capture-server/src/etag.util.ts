/**
 * Whether `If-None-Match` names `etag`, compared weakly as RFC 9110 asks. NOTE: a proxy that
 * compresses responses (nginx's gzip) turns the ETag into `W/"…"`, and clients send that back.
 */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}
