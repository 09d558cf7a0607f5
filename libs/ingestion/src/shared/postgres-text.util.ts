const NUL_OR_LONE_SURROGATE =
  /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Postgres text cannot hold NUL, and a lone UTF-16 surrogate reaches it as U+FFFD (the driver
 * encodes UTF-8). Replacing both up front keeps what we look up equal to what we stored.
 */
export function sanitizeText(value: string): string {
  return value.replace(NUL_OR_LONE_SURROGATE, '\uFFFD');
}

// An escape in JSON.stringify's output that jsonb refuses: \u0000, or a lone surrogate (which
// JSON.stringify writes as \udXXX). Preceded by an even number of backslashes, so that an escaped
// backslash followed by the letters "u0000" is left alone.
const JSONB_REFUSED_ESCAPE =
  /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|d[c-f][0-9a-f]{2})/gi;

/**
 * JSON text for a jsonb parameter. TRICKY: one value jsonb refuses would fail the statement, and
 * with it the whole batch, on every retry; so NUL and lone surrogates become U+FFFD here.
 */
export function toJsonb(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u') ? json.replace(JSONB_REFUSED_ESCAPE, '$1\\ufffd') : json;
}

/** A JSON scalar as text (PostHog's `String(value)`), or null for objects, arrays and null. */
export function scalarText(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : null;
}
