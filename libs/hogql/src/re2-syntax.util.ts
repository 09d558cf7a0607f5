import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/**
 * ClickHouse's RE2 syntax, checked with re2js and worded as C++ RE2 words it, so a bad pattern is a
 * 400. Where they disagree ClickHouse wins: `\C` reads as `\b`, group names may repeat, `(?)` is refused.
 */
export function re2SyntaxError(pattern: string): string | undefined {
  // `\C` is accepted and refused where `\b` is (not in a class), so swapping them keeps the verdict.
  let checked = pattern.includes('\\C')
    ? rewriteTokens(pattern, (token) => (token === '\\C' ? '\\b' : token))
    : pattern;
  let error = parseError(checked);
  if (error?.reason === DUPLICATE_NAME) {
    checked = withUniqueGroupNames(checked);
    error = parseError(checked);
  }
  if (error !== undefined) return clickHouseReason(error);
  // A `(?)` in a class or `\Q...\E` quote, turned into `)`, leaves the pattern valid; as a group it unbalances it.
  if (
    checked.includes('(?)') &&
    parseError(rewriteTokens(checked, (token) => (token === '(?)' ? ')' : token))) !== undefined
  ) {
    return 'empty flags';
  }
  return undefined;
}

export const MAX_REGEX_LENGTH = 4_096;

const DUPLICATE_NAME = 'duplicate capture group name';

interface ParseError {
  reason: string;
  at: string;
}

function parseError(pattern: string): ParseError | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) return { reason: error.error, at: error.input ?? '' };
    if (error instanceof RE2JSException) return { reason: error.message, at: '' };
    throw error;
  }
}

function clickHouseReason({ reason, at }: ParseError): string {
  switch (reason) {
    case 'missing closing )':
      return 'missing )';
    case 'missing closing ]':
      return 'missing ]';
    case 'trailing backslash at end of expression':
      return 'trailing \\';
    case 'invalid nested repetition operator':
    case 'invalid repeat count':
      return 'bad repetition operator';
    case 'invalid character class range':
      // `[z-a]` is a range the wrong way round; `[[:foo:]]` and `\p{Foo}` name no class.
      return at.startsWith('[:') || at.startsWith('\\p') || at.startsWith('\\P')
        ? 'invalid character class range'
        : 'bad character class range';
    case 'invalid named capture':
      return at.startsWith('(?<=') || at.startsWith('(?<!')
        ? 'lookbehind is not supported'
        : 'invalid named capture group';
    case 'invalid or unsupported Perl syntax':
      if (at.startsWith('(?=') || at.startsWith('(?!')) return 'lookahead is not supported';
      if (at.startsWith('(?P')) return 'invalid named capture group';
      if (/-[):]$/.test(at)) return 'missing flags after -';
      return 'invalid or unsupported group syntax';
    default:
      // Already RE2's words.
      return reason;
  }
}

/** Escapes walked in pairs keep `\\C` and `\(?)` as they are; each rewrite says why ignoring classes is safe. */
function rewriteTokens(pattern: string, rewrite: (token: string) => string): string {
  let result = '';
  for (let index = 0; index < pattern.length;) {
    let token = pattern[index];
    if (token === '\\') token = pattern.slice(index, index + 2);
    else if (pattern.startsWith('(?)', index)) token = '(?)';
    result += rewrite(token);
    index += token.length;
  }
  return result;
}

/** Group names made unique by a numbered prefix (`(?P<n>` becomes `(?P<g1_n>`); elsewhere the text stays valid. */
function withUniqueGroupNames(pattern: string): string {
  let count = 0;
  return pattern.replace(/\(\?P?<(?![=!])/g, (opening) => {
    count += 1;
    return `${opening}g${count}_`;
  });
}
