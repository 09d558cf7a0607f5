import { HogQLError, quoteExpression } from './hogql.errors';

/**
 * TRICKY: the parser is slow on nested input and traps on a few hundred levels; these text checks
 * reject such input first; the worker's deadline (hogql-parser.util.ts) is the hard bound.
 */
export interface HogQLLimits {
  /** Expressions in one `select` or `where` list. */
  maxExpressions: number;
  /** Code points. */
  maxExpressionLength: number;
  maxTokens: number;
  /** Of `(`, `[` and `{`. */
  maxNestingDepth: number;
  maxAstDepth: number;
  maxAstNodes: number;
  parseTimeoutMs: number;
  /** For all expressions of one compile call. */
  totalParseTimeoutMs: number;
}

export const DEFAULT_HOGQL_LIMITS: Readonly<HogQLLimits> = {
  maxExpressions: 50,
  maxExpressionLength: 4_000,
  maxTokens: 600,
  maxNestingDepth: 12,
  maxAstDepth: 64,
  maxAstNodes: 1_000,
  parseTimeoutMs: 1_500,
  totalParseTimeoutMs: 5_000,
};

export function resolveLimits(overrides: Partial<HogQLLimits> = {}): HogQLLimits {
  return { ...DEFAULT_HOGQL_LIMITS, ...overrides };
}

const IDENTIFIER_CHAR = /[\p{L}\p{N}_$]/u;

/**
 * Scans strings and quoted identifiers as HogQL's lexer does. Comments are refused (not mirroring
 * the grammar's comment rules keeps this simple), as are template strings, which hide expressions.
 */
export function checkExpressionText(text: string, limits: HogQLLimits): void {
  const characters = Array.from(text);
  if (characters.length > limits.maxExpressionLength) {
    throw new HogQLError(
      `Expression ${quoteExpression(text)} is longer than ${limits.maxExpressionLength} characters`,
      { kind: 'limit', expression: text },
    );
  }
  if (text.trim() === '') {
    throw new HogQLError('Empty expression', { kind: 'syntax', expression: text });
  }
  let depth = 0;
  let maxDepth = 0;
  let tokens = 0;
  let index = 0;
  const length = characters.length;
  const fail = (message: string, kind: 'syntax' | 'limit' | 'unsupported' = 'syntax'): never => {
    throw new HogQLError(`${message} in ${quoteExpression(text)}`, { kind, expression: text });
  };
  while (index < length) {
    const character = characters[index];
    const next = characters[index + 1];
    if (/\s/u.test(character)) {
      index += 1;
      continue;
    }
    tokens += 1;
    if (tokens > limits.maxTokens) {
      fail(`More than ${limits.maxTokens} tokens`, 'limit');
    }
    if (character === "'" || character === '`' || character === '"') {
      index = skipQuoted(characters, index, character);
      if (index < 0) fail('Unterminated quoted text');
      continue;
    }
    if (
      (character === '-' && next === '-') ||
      (character === '/' && (next === '*' || next === '/')) ||
      character === '#'
    ) {
      fail('Comments are not allowed', 'unsupported');
    }
    if (character === '(' || character === '[' || character === '{') {
      depth += 1;
      maxDepth = Math.max(maxDepth, depth);
      if (maxDepth > limits.maxNestingDepth) {
        fail(`Nesting deeper than ${limits.maxNestingDepth} levels`, 'limit');
      }
      index += 1;
      continue;
    }
    if (character === ')' || character === ']' || character === '}') {
      depth = Math.max(0, depth - 1);
      index += 1;
      continue;
    }
    if (IDENTIFIER_CHAR.test(character)) {
      const start = index;
      while (index < length && IDENTIFIER_CHAR.test(characters[index])) index += 1;
      const word = characters.slice(start, index).join('');
      if ((word === 'f' || word === 'F') && characters[index] === "'") {
        fail('Template strings are not allowed', 'unsupported');
      }
      continue;
    }
    index += 1;
  }
}

/** Index just past the closing quote, or -1 when the text ends first. */
function skipQuoted(characters: string[], start: number, quote: string): number {
  let index = start + 1;
  while (index < characters.length) {
    const character = characters[index];
    if (character === '\\') {
      index += 2;
      continue;
    }
    if (character === quote) {
      if (characters[index + 1] === quote) {
        index += 2;
        continue;
      }
      return index + 1;
    }
    index += 1;
  }
  return -1;
}
