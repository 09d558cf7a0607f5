/**
 * rust/capture parses request bodies with serde_json, whose default recursion limit is 128
 * (`remaining_depth: 128` in serde_json's de.rs, one taken per array or object entered, the error
 * raised when it reaches 0): a body nesting 128 arrays/objects is refused with 400 "failed to parse
 * request: recursion limit exceeded", 127 is taken. Capture keeps the same bound, which also keeps
 * every event it accepts far below the depth at which a recursive walk downstream (JSON.stringify
 * in ingestion, Postgres jsonb, the apps' sandbox) runs out of stack.
 */
export const MAX_JSON_NESTING = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether valid JSON text nests `limit` or more arrays/objects inside each other (the text's own
 * outer `{` counting as one).
 *
 * NOTE: capture's CPU per event is a tracked goal, so this costs almost nothing on real events:
 * nesting `limit` deep takes at least `limit` opening brackets, and counting brackets with
 * `indexOf` (string contents included, which only overcounts) is a native scan that stops at
 * `limit`. Only text with that many brackets (a batch-sized event, a long list of objects) is
 * walked exactly, skipping string contents with `indexOf` too.
 */
export function nestsAtLeast(json: string, limit: number): boolean {
  if (limit <= 0) return true;
  return countsOpeningBrackets(json, limit) && reachesNesting(json, limit);
}

/** Whether the text holds at least `limit` `{` and `[` together, strings included. */
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

/** Whether the text's nesting reaches `limit`, string contents skipped. */
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
    // Escaped when preceded by an odd number of backslashes.
    let backslashes = 0;
    while (json.charCodeAt(index - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return index;
  }
}
