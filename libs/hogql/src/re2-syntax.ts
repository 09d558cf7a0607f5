/**
 * A syntax check for RE2, the regex engine of ClickHouse's `match` and `extract`, so a bad pattern
 * is a 400 naming the pattern instead of a ClickHouse error. It follows RE2's parser
 * (https://github.com/google/re2/wiki/Syntax): no lookaround, no backreferences, no possessive or
 * stacked repetition (ClickHouse's RE2 does allow repeated group names), repetition counts up to 1000, only RE2's escapes. It errs towards accepting:
 * a pattern it passes that RE2 still refuses (an unknown `\p{Name}`, a pattern too large to
 * compile) comes back from ClickHouse as CANNOT_COMPILE_REGEXP, which `hogqlErrorFromClickHouse`
 * also turns into a 400.
 *
 * Returns undefined for a valid pattern, else the reason.
 */
export function re2SyntaxError(pattern: string): string | undefined {
  try {
    new Re2Checker(pattern).check();
    return undefined;
  } catch (error) {
    if (error instanceof Re2SyntaxError) return error.message;
    throw error;
  }
}

export const MAX_REGEX_LENGTH = 4_096;

class Re2SyntaxError extends Error {}

const MAX_REPEAT = 1000;
const MAX_NESTING = 1000;
const CONTROL_ESCAPES = new Set(['a', 'f', 'n', 'r', 't', 'v']);
const CLASS_ESCAPES = new Set(['d', 'D', 's', 'S', 'w', 'W']);
const ASSERTION_ESCAPES = new Set(['b', 'B', 'A', 'z']);
const POSIX_CLASSES = new Set([
  'alnum',
  'alpha',
  'ascii',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'word',
  'xdigit',
]);
const FLAGS = new Set(['i', 'm', 's', 'U']);

class Re2Checker {
  private readonly chars: string[];
  private index = 0;
  /** Whether there is something a repetition operator could apply to (RE2's stack top). */
  private hasOperand = false;
  /** Whether the token just read was a repetition (RE2 refuses `a**`, `a+*`, `a{2}*`). */
  private lastWasRepeat = false;

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
  }

  check(): void {
    let depth = 0;
    while (this.index < this.chars.length) {
      const character = this.chars[this.index];
      let isRepeat = false;
      switch (character) {
        case '(': {
          depth += 1;
          if (depth > MAX_NESTING) this.fail('expression nests too deeply');
          const flagsOnly = this.readGroupOpening();
          if (flagsOnly) depth -= 1;
          else this.hasOperand = false;
          break;
        }
        case ')':
          if (depth === 0) this.fail('unexpected )');
          depth -= 1;
          this.index += 1;
          this.hasOperand = true;
          break;
        case '|':
          this.index += 1;
          this.hasOperand = false;
          break;
        case '*':
        case '+':
        case '?':
          this.readRepeat(1);
          isRepeat = true;
          break;
        case '{': {
          const size = this.repeatBracesLength();
          if (size === 0) {
            // Not a valid {n,m}: RE2 takes the brace literally.
            this.index += 1;
            this.hasOperand = true;
          } else {
            this.readRepeat(size);
            isRepeat = true;
          }
          break;
        }
        case '[':
          this.readClass();
          this.hasOperand = true;
          break;
        case '\\':
          if (this.readEscape(false) !== 'quote-empty') this.hasOperand = true;
          break;
        default:
          this.index += 1;
          this.hasOperand = true;
      }
      this.lastWasRepeat = isRepeat;
    }
    if (depth > 0) this.fail('missing )');
  }

  private fail(reason: string): never {
    throw new Re2SyntaxError(reason);
  }

  /** Reads `(`, `(?:`, `(?P<name>`, `(?<name>`, `(?flags)`, `(?flags:`. True for `(?flags)`. */
  private readGroupOpening(): boolean {
    this.index += 1;
    if (this.chars[this.index] !== '?') return false;
    this.index += 1;
    const next = this.chars[this.index];
    if (next === 'P' || next === '<') {
      if (next === 'P') {
        this.index += 1;
        if (this.chars[this.index] !== '<') this.fail('invalid named capture group');
      }
      if (next === '<' && (this.chars[this.index + 1] === '=' || this.chars[this.index + 1] === '!')) {
        this.fail('lookbehind is not supported');
      }
      this.index += 1;
      const start = this.index;
      while (this.index < this.chars.length && /[A-Za-z0-9_]/.test(this.chars[this.index])) {
        this.index += 1;
      }
      const name = this.chars.slice(start, this.index).join('');
      if (name === '' || this.chars[this.index] !== '>') this.fail('invalid named capture group');
      this.index += 1;
      return false;
    }
    // Flags: (?i) (?i-s) (?i:...) (?:...)
    let sawFlag = false;
    let negated = false;
    let sawFlagAfterMinus = false;
    while (this.index < this.chars.length) {
      const character = this.chars[this.index];
      if (FLAGS.has(character)) {
        sawFlag = true;
        if (negated) sawFlagAfterMinus = true;
        this.index += 1;
        continue;
      }
      if (character === '-') {
        if (negated) this.fail('invalid flags');
        negated = true;
        this.index += 1;
        continue;
      }
      if (character === ':' || character === ')') {
        if (negated && !sawFlagAfterMinus) this.fail('missing flags after -');
        if (character === ')' && !sawFlag) this.fail('empty flags');
        this.index += 1;
        return character === ')';
      }
      if (character === '=' || character === '!') this.fail('lookahead is not supported');
      this.fail('invalid or unsupported group syntax');
    }
    return this.fail('missing )');
  }

  private readRepeat(size: number): void {
    if (!this.hasOperand) this.fail('missing argument to repetition operator');
    if (this.lastWasRepeat) this.fail('bad repetition operator');
    this.index += size;
    // A trailing `?` makes it lazy; it is part of the same operator.
    if (this.chars[this.index] === '?') this.index += 1;
  }

  /** Length of a valid `{n}`, `{n,}` or `{n,m}` at the index, else 0. Checks the counts. */
  private repeatBracesLength(): number {
    let index = this.index + 1;
    const readNumber = (): string => {
      const start = index;
      while (index < this.chars.length && /[0-9]/.test(this.chars[index])) index += 1;
      return this.chars.slice(start, index).join('');
    };
    const min = readNumber();
    if (min === '') return 0;
    let max: string | undefined = min;
    if (this.chars[index] === ',') {
      index += 1;
      max = readNumber();
      if (max === '') max = undefined;
    }
    if (this.chars[index] !== '}') return 0;
    const minimum = Number(min);
    const maximum = max === undefined ? undefined : Number(max);
    if (minimum > MAX_REPEAT || (maximum !== undefined && (maximum > MAX_REPEAT || maximum < minimum))) {
      this.fail('bad repetition operator');
    }
    return index + 1 - this.index;
  }

  private readClass(): void {
    this.index += 1;
    if (this.chars[this.index] === '^') this.index += 1;
    let first = true;
    while (this.index < this.chars.length) {
      const character = this.chars[this.index];
      if (character === ']' && !first) {
        this.index += 1;
        return;
      }
      first = false;
      if (character === '[' && this.chars[this.index + 1] === ':') {
        const end = this.chars.indexOf(']', this.index + 2);
        const body = end < 0 ? '' : this.chars.slice(this.index + 2, end).join('');
        if (body.endsWith(':')) {
          const name = body.slice(0, -1).replace(/^\^/, '');
          if (!POSIX_CLASSES.has(name)) this.fail('invalid character class range');
          this.index = end + 1;
          continue;
        }
      }
      const low = this.readClassChar();
      if (
        this.chars[this.index] === '-' &&
        this.chars[this.index + 1] !== undefined &&
        this.chars[this.index + 1] !== ']'
      ) {
        this.index += 1;
        const high = this.readClassChar();
        if (low === undefined || high === undefined) this.fail('bad character class range');
        if (low > high) this.fail('bad character class range');
      }
    }
    this.fail('missing ]');
  }

  /** One class member; its code point, or undefined for a class escape like `\d`. */
  private readClassChar(): number | undefined {
    const character = this.chars[this.index];
    if (character === '\\') {
      const start = this.index;
      const kind = this.readEscape(true);
      if (kind === 'class') return undefined;
      if (kind === 'literal') return this.escapedCodePoint(start);
      this.fail('invalid escape sequence');
    }
    this.index += 1;
    return character.codePointAt(0);
  }

  private escapedCodePoint(start: number): number | undefined {
    const body = this.chars.slice(start + 1, this.index).join('');
    if (body.startsWith('x')) {
      const hex = body.replace(/^x\{?/, '').replace(/\}$/, '');
      return parseInt(hex, 16);
    }
    if (/^[0-7]+$/.test(body)) return parseInt(body, 8);
    if (body === 'n') return 10;
    if (body === 't') return 9;
    if (body === 'r') return 13;
    if (body === 'f') return 12;
    if (body === 'v') return 11;
    if (body === 'a') return 7;
    return body.codePointAt(0);
  }

  /** Reads an escape at the index. */
  private readEscape(inClass: boolean): 'literal' | 'class' | 'assertion' | 'quote' | 'quote-empty' {
    this.index += 1;
    const character = this.chars[this.index];
    if (character === undefined) this.fail('trailing \\');
    this.index += 1;
    if (CONTROL_ESCAPES.has(character)) return 'literal';
    if (CLASS_ESCAPES.has(character)) return 'class';
    if (character === 'p' || character === 'P') {
      if (this.chars[this.index] === '{') {
        const end = this.chars.indexOf('}', this.index);
        const name = end < 0 ? '' : this.chars.slice(this.index + 1, end).join('');
        if (!/^\^?[A-Za-z_]+$/.test(name)) this.fail('invalid character class range');
        this.index = end + 1;
      } else {
        const name = this.chars[this.index];
        if (name === undefined || !/[A-Za-z]/.test(name)) this.fail('invalid character class range');
        this.index += 1;
      }
      return 'class';
    }
    if (character === 'x') {
      if (this.chars[this.index] === '{') {
        const end = this.chars.indexOf('}', this.index);
        const hex = end < 0 ? '' : this.chars.slice(this.index + 1, end).join('');
        if (!/^[0-9A-Fa-f]{1,8}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) {
          this.fail('invalid escape sequence');
        }
        this.index = end + 1;
      } else {
        const hex = this.chars.slice(this.index, this.index + 2).join('');
        if (!/^[0-9A-Fa-f]{2}$/.test(hex)) this.fail('invalid escape sequence');
        this.index += 2;
      }
      return 'literal';
    }
    if (character >= '1' && character <= '7') {
      // A lone non-zero digit is a backreference, which RE2 does not have; more digits are octal.
      const next = this.chars[this.index];
      if (next === undefined || next < '0' || next > '7') this.fail('invalid escape sequence');
    }
    if (character >= '0' && character <= '7') {
      for (let count = 0; count < 2; count += 1) {
        const next = this.chars[this.index];
        if (next === undefined || next < '0' || next > '7') break;
        this.index += 1;
      }
      return 'literal';
    }
    if (!inClass) {
      if (ASSERTION_ESCAPES.has(character)) return 'assertion';
      if (character === 'C') return 'literal';
      if (character === 'Q') {
        const start = this.index;
        while (this.index < this.chars.length) {
          if (this.chars[this.index] === '\\' && this.chars[this.index + 1] === 'E') break;
          this.index += 1;
        }
        const empty = this.index === start;
        if (this.index < this.chars.length) this.index += 2;
        return empty ? 'quote-empty' : 'quote';
      }
    }
    const code = character.codePointAt(0) ?? 0;
    if (code < 0x80 && !/[A-Za-z0-9]/.test(character)) return 'literal';
    return this.fail('invalid escape sequence');
  }
}
