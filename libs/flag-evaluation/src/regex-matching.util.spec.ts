import type { FlagProperty } from './flag-definition.types';
import { matchProperty } from './property-matching.util';
import { flagRegexProblem, MAX_REGEX_PROGRAM_SIZE, MAX_REGEX_SUBJECT_LENGTH } from './regex-matching.util';
import { matchWithDeadline, type MatchCase } from './testing/deadline.util';
import { RandomSource, seededRandom } from './testing/random-flags.util';

/**
 * Generous: every batch below answers in well under a second on RE2. A backtracking engine blows
 * through it (`(a|a)*$` took 5.5 s on 25 `a`s and `!`, 45 s on 28), and the worker is stopped.
 */
const DEADLINE_MS = 20_000;
const options = { timezone: 'UTC', now: new Date('2026-03-15T12:00:00Z') };
const LONGEST = MAX_REGEX_SUBJECT_LENGTH;

function regexCase(value: string, actual: string, operator: 'regex' | 'not_regex' = 'regex'): MatchCase {
  return { filter: { key: 'email', type: 'person', operator, value }, properties: { email: actual } };
}

function matches(value: string, actual: unknown, operator: FlagProperty['operator'] = 'regex'): boolean {
  return matchProperty({ key: 'key', type: 'person', operator, value }, { key: actual }, options);
}

describe('flag regexes run in time linear in the property', () => {
  const reported: [string, string, boolean][] = [
    ['(a|a)*$', `${'a'.repeat(25)}!`, true],
    ['(a|a)*$', `${'a'.repeat(28)}!`, true],
    ['(a|a)*$', `${'a'.repeat(LONGEST - 1)}!`, true],
    ['(a|aa)+$', `${'a'.repeat(LONGEST - 1)}!`, false],
    ['(a|aa)+$', 'a'.repeat(LONGEST), true],
    ['(a|b|ab)*c', 'ab'.repeat(LONGEST / 2), false],
    ['(a|b|ab)*c', `${'ab'.repeat(LONGEST / 2 - 1)}c`, true],
    [`${'[\\s\\S]*'.repeat(12)}!`, 'a'.repeat(LONGEST), false],
    [`${'[\\s\\S]*'.repeat(12)}!`, `${'a'.repeat(LONGEST - 1)}!`, true],
    ['^(a+)+$', `${'a'.repeat(LONGEST - 1)}!`, false],
    ['^(a+)+$', 'a'.repeat(LONGEST), true],
  ];

  it('answers the reported ReDoS patterns against the longest properties before the deadline', async () => {
    const cases = reported.flatMap(([pattern, value]) => [
      regexCase(pattern, value),
      regexCase(pattern, value, 'not_regex'),
    ]);
    const results = await matchWithDeadline(cases, DEADLINE_MS);
    expect(results).toEqual(reported.flatMap(([, , expected]) => [expected, !expected]));
  });

  it('answers the costliest patterns the size cap allows against the longest property', async () => {
    const hex = Array.from({ length: LONGEST }, (_, index) => '0123456789abcdef'[(index * 7) % 16]).join('');
    const costly = ['[\\w\\W]{0,1000}a[\\w\\W]{0,1000}$', '(?:[a-z]{1,1000}\\d?)$', '(?:.{0,30}[ab]){30}$'];
    for (const pattern of costly) expect(flagRegexProblem(pattern)).toBeUndefined();
    const results = await matchWithDeadline(
      costly.map((pattern) => regexCase(pattern, hex)),
      DEADLINE_MS,
    );
    expect(results).toEqual([true, false, false]);
  });
});

describe('flag regex bounds', () => {
  it(`matches a property of ${LONGEST} characters, and one longer neither way`, () => {
    expect(matches('b$', `${'a'.repeat(LONGEST - 1)}b`)).toBe(true);
    expect(matches('b$', `${'a'.repeat(LONGEST - 1)}b`, 'not_regex')).toBe(false);
    expect(matches('b$', `${'a'.repeat(LONGEST)}b`)).toBe(false);
    expect(matches('b$', `${'a'.repeat(LONGEST)}b`, 'not_regex')).toBe(false);
  });

  it('bounds the text form of a non-string property too', () => {
    const long = Array.from({ length: LONGEST }, () => 1);
    expect(matches('1', long)).toBe(false);
    expect(matches('1', long, 'not_regex')).toBe(false);
    expect(matches('1', long.slice(0, 100))).toBe(true);
  });

  it(`refuses a pattern compiling to more than ${MAX_REGEX_PROGRAM_SIZE} instructions, which never matches`, () => {
    const large = 'a{1000}b{1000}c{1000}d{1000}e{1000}';
    expect(flagRegexProblem(large)).toMatch(/^it compiles to \d+ instructions, more than the 5000 allowed$/);
    expect(matches(large, 'x')).toBe(false);
    expect(matches(large, 'x', 'not_regex')).toBe(false);
    expect(flagRegexProblem('a{1000}b{1000}c{1000}d{1000}')).toBeUndefined();
  });
});

describe('flag regex semantics (PostHog: Rust Regex::find, unanchored)', () => {
  it.each([
    ['3', 'val3', true],
    ['^val', 'my val', false],
    ['val$', 'val\n', false],
    ['^a.c$', 'a\nc', false],
    ['(?s)^a.c$', 'a\nc', true],
    ['(?m)^c$', 'a\nc', true],
    ['(?i)^ANN@', 'ann@posthog.com', true],
    ['ann(?i)@POSTHOG', 'ann@posthog.com', true],
    ['(?i:A)nn', 'Ann', true],
    ['(?i:A)NN', 'Ann', false],
    ['^é+$', 'ééé', true],
    ['^.$', '💥', true],
    ['\\p{Greek}', 'Ωmega', true],
    ['(?P<user>\\w+)@(?<domain>\\w+)', 'ann@posthog', true],
    ['', 'anything', true],
    ['\\bpro\\b', 'a pro plan', true],
    ['\\bpro\\b', 'approve', false],
    // RE2, unlike Rust's regex, reads \d as ASCII digits only.
    ['^\\d+$', '١٢٣', false],
  ])('%s against %p: %p', (pattern, value, expected) => {
    expect(matches(pattern, value)).toBe(expected);
  });

  it.each([
    ['^(a+)\\1+$', 'invalid escape sequence: `\\1`'],
    ['(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(?<=a)b', 'invalid named capture: `(?<=a)b`'],
    ['(?>a)', 'invalid or unsupported Perl syntax: `(?>`'],
    ['(?x) a', 'invalid or unsupported Perl syntax: `(?x`'],
  ])('refuses %s, which RE2 cannot compile, and never matches it', (pattern, reason) => {
    expect(flagRegexProblem(pattern)).toBe(
      `${reason} (flags use RE2 syntax, which has no backreferences or lookaround)`,
    );
    expect(matches(pattern, 'aaaa')).toBe(false);
    expect(matches(pattern, 'aaaa', 'not_regex')).toBe(false);
  });

  it.each([
    ['a**', 'invalid nested repetition operator: `**`'],
    ['(', 'missing closing ): `(`'],
    ['?*', 'missing argument to repetition operator: `?`'],
  ])('refuses %s, which is not a regular expression, and never matches it', (pattern, reason) => {
    expect(flagRegexProblem(pattern)).toBe(reason);
    expect(matches(pattern, 'aaaa')).toBe(false);
    expect(matches(pattern, 'aaaa', 'not_regex')).toBe(false);
  });
});

/** Patterns over a, b, c from the syntax RE2 and JavaScript's RegExp read alike, rich in nested and overlapping repetition. */
function randomPattern(random: RandomSource, depth = 0): string {
  const atoms = ['a', 'b', 'c', '.', '[ab]', '[^a]', '[a-c]', '\\w', '\\d', '!', 'a?', '\\s'];
  const quantifiers = ['*', '+', '?', '{1,3}', '{2}', '*?', '+?', '{0,5}'];
  const sequence = (): string => {
    let result = '';
    for (let index = random.int(1, 3); index > 0; index -= 1) {
      let atom: string;
      if (depth < 3 && random.chance(0.45)) {
        const alternatives = Array.from({ length: random.int(1, 3) }, () => randomPattern(random, depth + 1));
        atom = `${random.pick(['(', '(?:'])}${alternatives.join('|')})`;
      } else {
        atom = random.pick(atoms);
        if (atom.endsWith('?')) {
          result += atom;
          continue;
        }
      }
      if (random.chance(0.6)) atom += random.pick(quantifiers);
      result += atom;
    }
    return result;
  };
  if (depth > 0) return sequence();
  return `${random.chance(0.25) ? '^' : ''}${sequence()}${random.chance(0.4) ? '$' : ''}`;
}

function randomText(random: RandomSource, length: number, alphabet: string): string {
  return Array.from({ length }, () => random.pick([...alphabet])).join('');
}

describe('fuzz: random flag regexes against random and adversarial properties', () => {
  const random = new RandomSource(seededRandom(20260315));
  const patterns = Array.from({ length: 300 }, () => randomPattern(random));

  it('compiles every generated pattern within the size cap (the fuzz evaluates, not refuses)', () => {
    expect(patterns.filter((pattern) => flagRegexProblem(pattern) !== undefined)).toEqual([]);
  });

  it('agrees with a backtracking engine on short properties', () => {
    const disagreements: string[] = [];
    for (const pattern of patterns) {
      const oracle = new RegExp(pattern);
      for (let index = 0; index < 8; index += 1) {
        const value = randomText(random, random.int(0, 8), 'abc! 1');
        if (matches(pattern, value) !== oracle.test(value))
          disagreements.push(`${pattern} on ${JSON.stringify(value)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('answers every generated pattern against adversarial properties of the longest length', async () => {
    const values = [
      `${'a'.repeat(LONGEST - 1)}!`,
      'a'.repeat(LONGEST),
      `${'ab'.repeat(LONGEST / 2 - 1)}c!`,
      randomText(random, LONGEST, 'abc! 1'),
    ];
    const cases = patterns.flatMap((pattern) => values.map((value) => regexCase(pattern, value)));
    const results = await matchWithDeadline(cases, DEADLINE_MS * 3);
    expect(results).toHaveLength(cases.length);
    // Both answers occur: the patterns are not all trivially matching or failing.
    expect(new Set(results)).toEqual(new Set([true, false]));
    // Spot-check the worker against this thread: the answers are real matches, not defaults.
    const sample = cases.filter((_, index) => index % 37 === 0);
    expect(sample.map((item) => matchProperty(item.filter, item.properties, options))).toEqual(
      results.filter((_, index) => index % 37 === 0),
    );
  });
});
