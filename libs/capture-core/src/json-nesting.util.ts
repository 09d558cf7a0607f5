/**
 * serde_json's recursion limit in rust/capture (128 refused, 127 taken); it also keeps recursive walks
 * downstream (JSON.stringify, jsonb, the apps' sandbox) far from running out of stack.
 */
export const MAX_JSON_NESTING = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether valid JSON nests `limit` or more arrays/objects (the outer `{` counted). NOTE: only text with
 * `limit` opening brackets (a cheap native scan) is walked exactly.
 */
export function nestsAtLeast(json: string, limit: number): boolean {
  if (limit <= 0) return true;
  return countsOpeningBrackets(json, limit) && reachesNesting(json, limit);
}

/** Strings included, which only overcounts. */
function countsOpeningBrackets(json: string, limit: number): boolean {
  let count = 0;
  for (let index = json.indexOf('{'); index !== -1; index = json.indexOf('{', index + 1)) {
    if (++count >= limit) return true;
  }
  for (let index = json.indexOf('['); index !== -1; index = json.indexOf('[', index + 1)) {
    if (++count >= limit) return true;
  }
  return false;
}

function reachesNesting(json: string, limit: number): boolean {
  let depth = 0;
  const length = json.length;
  for (let index = 0; index < length; index++) {
    const code = json.charCodeAt(index);
    if (code === QUOTE) {
      index = closingQuote(json, index);
      if (index === -1) return false;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth >= limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that ends the string opened at `open`, or -1 when it never ends. */
function closingQuote(json: string, open: number): number {
  let index = open;
  for (;;) {
    index = json.indexOf('"', index + 1);
    if (index === -1) return -1;
    let backslashes = 0;
    while (json.charCodeAt(index - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return index;
  }
}
