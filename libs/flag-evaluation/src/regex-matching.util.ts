import { RE2JSException, RE2JSSyntaxException, RE2Set } from 're2js';

/**
 * SECURITY: the text comes from anyone with the public token, so regexes run on RE2 (linear, no
 * backtracking) and both factors of `text length × program size` are bounded; the DFA budget keeps
 * each cached pattern's lazy DFA small (only an RE2Set takes one).
 */
export const MAX_REGEX_SUBJECT_LENGTH = 4_096;
export const MAX_REGEX_PROGRAM_SIZE = 5_000;
const DFA_MEMORY_BYTES = 64 * 1024;
const REGEX_CACHE_LIMIT = 1_000;

type CompiledRegex = { set: RE2Set } | { problem: string };

const regexCache = new Map<string, CompiledRegex>();

function compile(pattern: string): CompiledRegex {
  const set = new RE2Set(RE2Set.UNANCHORED, 0, DFA_MEMORY_BYTES);
  try {
    set.add(pattern);
    set.compile();
  } catch (error) {
    if (error instanceof RE2JSException) return { problem: describe(error) };
    throw error;
  }
  const size = set.prog.numInst();
  if (size > MAX_REGEX_PROGRAM_SIZE) {
    return {
      problem: `it compiles to ${size} instructions, more than the ${MAX_REGEX_PROGRAM_SIZE} allowed`,
    };
  }
  return { set };
}

/** RE2's reason and the part of the pattern at fault, for the person who wrote it. */
function describe(error: RE2JSException): string {
  const reason = error.message.replace(/^error parsing regexp: /, '');
  // Where a backreference (`\1`) or lookaround (`(?=`, `(?<=`) lands in RE2's parser.
  const unsupported =
    error instanceof RE2JSSyntaxException &&
    ['invalid escape sequence', 'invalid or unsupported Perl syntax', 'invalid named capture'].includes(
      error.error,
    );
  return unsupported ? `${reason} (flags use RE2 syntax, which has no backreferences or lookaround)` : reason;
}

function compiled(pattern: string): CompiledRegex {
  let regex = regexCache.get(pattern);
  if (regex === undefined) {
    regex = compile(pattern);
    if (regexCache.size >= REGEX_CACHE_LIMIT) regexCache.clear();
    regexCache.set(pattern, regex);
  }
  return regex;
}

/** Why a flag regex cannot be evaluated (RE2 refuses it, or it is too large), else undefined. */
export function flagRegexProblem(pattern: string): string | undefined {
  const regex = compiled(pattern);
  return 'problem' in regex ? regex.problem : undefined;
}

/**
 * An unanchored search, as Rust's `Regex::find`; undefined when the pattern does not compile or is
 * too large, or the text is longer than MAX_REGEX_SUBJECT_LENGTH.
 */
export function regexFind(pattern: string, haystack: string): boolean | undefined {
  if (haystack.length > MAX_REGEX_SUBJECT_LENGTH) return undefined;
  const regex = compiled(pattern);
  if ('problem' in regex) return undefined;
  return regex.set.match(haystack).length > 0;
}
