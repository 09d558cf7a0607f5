import { RE2JSException, RE2JSSyntaxException, RE2Set } from 're2js';

/**
 * Flag regexes (`regex`/`not_regex`) run on RE2, through re2js (a pure-JavaScript port of RE2J, Go's
 * regexp): an automaton, no backtracking, so matching takes time linear in the text whatever the
 * pattern. The text is the property an SDK sends with the public project token, so a backtracking
 * engine would let anyone hold the process with `(a|a)*$` and a few dozen `a`s.
 *
 * NOTE: PostHog's flags service compiles with fancy-regex (Rust syntax plus backreferences and
 * lookaround, run by a backtracker capped at 10,000 steps). RE2 reads the same syntax except those
 * two, so such patterns are refused when a flag is saved and never match here. Smaller differences:
 * `\d`, `\w`, `\s` and `\b` are ASCII in RE2 and Unicode in Rust, and RE2 has no `(?x)` or class
 * set operations (`[a-z&&[^x]]`).
 *
 * Linear is still `text length × program size`, so both are bounded:
 * - MAX_REGEX_SUBJECT_LENGTH: a longer property is not matched either way, as the service treats a
 *   regex error. 4,096 characters hold any email, id, user agent or ordinary URL.
 * - MAX_REGEX_PROGRAM_SIZE: RE2 instructions a pattern compiles to. Ordinary patterns compile to
 *   tens; `a{1000}` to about 1,000; a list of 100 UUIDs to about 3,300. The costliest patterns
 *   under the cap against the longest text take a fraction of a second.
 * - DFA_MEMORY_BYTES: each cached pattern keeps a lazily built DFA; re2js's default budget (8 MB)
 *   times the cache size would let varied texts grow the heap by gigabytes. Past the budget RE2
 *   falls back to its NFA, still linear. A one-pattern RE2Set is re2js's way to set that budget.
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
 * An unanchored search, as Rust's `Regex::find`: whether the pattern matches anywhere in the text.
 * Undefined when it cannot say: the pattern does not compile or is too large, or the text is longer
 * than MAX_REGEX_SUBJECT_LENGTH.
 */
export function regexFind(pattern: string, haystack: string): boolean | undefined {
  if (haystack.length > MAX_REGEX_SUBJECT_LENGTH) return undefined;
  const regex = compiled(pattern);
  if ('problem' in regex) return undefined;
  return regex.set.match(haystack).length > 0;
}
