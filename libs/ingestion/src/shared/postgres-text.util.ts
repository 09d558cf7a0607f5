const NUL_OR_LONE_SURROGATE =
  /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** NUL and lone surrogates replaced up front, so what we look up equals what Postgres stored. */
export function sanitizeText(value: string): string {
  return value.replace(NUL_OR_LONE_SURROGATE, '\uFFFD');
}

// \u0000 or a lone surrogate (`\udXXX`), after an even number of backslashes (not an escaped one).
const JSONB_REFUSED_ESCAPE =
  /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|d[c-f][0-9a-f]{2})/gi;

/** TRICKY: one value jsonb refuses would fail the whole batch on every retry. */
export function toJsonb(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u') ? json.replace(JSONB_REFUSED_ESCAPE, '$1\\ufffd') : json;
}

/** PostHog's `String(value)`; null for objects, arrays and null. */
export function scalarText(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : null;
}
