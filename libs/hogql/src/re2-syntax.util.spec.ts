import { re2SyntaxError } from './re2-syntax.util';

// What ClickHouse's RE2 says about each is checked against chDB in hogql.integration-spec.ts.
describe('re2SyntaxError', () => {
  it.each([
    'abc',
    '^https?://[^/]+/path$',
    '(?i)chrome',
    '(?i:a)b',
    '(?is-U:a)',
    '(?P<name>x)(?<other>y)',
    '[[:alpha:]][[:^digit:]]',
    '\\d+\\s\\w\\D\\S\\W',
    '\\pL\\p{Greek}\\PN\\P{^Latin}',
    'a{2}b{2,}c{2,3}d{,3}',
    'a*?b+?c??d{2}?',
    '\\Qa.b*c\\E+',
    '\\Qunterminated quote',
    '[]a][^]a][a-][-a]',
    '\\x41\\x{263a}\\101\\0\\n\\t',
    '\\.\\-\\/\\*\\(\\)',
    '\\A\\b\\B\\z^$',
    '\\C',
    '^*',
    'a|b|',
    '()',
    'a{1000}',
    'é+💥?',
    '{',
    'a{',
    'a{1,',
    '}',
    ']',
    '[\\d\\pL_.-]+@',
    'a*(?i)*',
    // ClickHouse's C++ RE2 takes these; RE2J, which the check runs, alone would not.
    'a\\Cb',
    '\\C*\\C{2}',
    '(?P<n>a)(?P<n>b)',
    // Text that looks like an empty flag group but is not one.
    '[(?)]',
    '\\Q(?)\\E',
    '(a\\(?)',
    '\\\\C',
  ])('accepts %s', (pattern) => {
    expect(re2SyntaxError(pattern)).toBeUndefined();
  });

  it.each([
    ['(', 'missing )'],
    ['(a', 'missing )'],
    [')', 'unexpected )'],
    ['a)', 'unexpected )'],
    ['[', 'missing ]'],
    ['[a', 'missing ]'],
    ['a**', 'bad repetition operator'],
    ['a++', 'bad repetition operator'],
    ['a*+', 'bad repetition operator'],
    ['a{2}{3}', 'bad repetition operator'],
    ['a{1001}', 'bad repetition operator'],
    ['a{3,2}', 'bad repetition operator'],
    ['*a', 'missing argument to repetition operator'],
    ['a|*', 'missing argument to repetition operator'],
    ['(*)', 'missing argument to repetition operator'],
    ['(?=a)', 'lookahead is not supported'],
    ['(?!a)', 'lookahead is not supported'],
    ['(?<=a)', 'lookbehind is not supported'],
    ['(?<!a)', 'lookbehind is not supported'],
    ['(?>a)', 'invalid or unsupported group syntax'],
    ['(?#c)', 'invalid or unsupported group syntax'],
    ['(?x)', 'invalid or unsupported group syntax'],
    ['(?)', 'empty flags'],
    ['a(?)b', 'empty flags'],
    ['\\\\(?)', 'empty flags'],
    ['(?P<n>a)(?P<n>b', 'missing )'],
    ['(?P<n>a)(?P<n>b)(?=c)', 'lookahead is not supported'],
    ['(?i-)', 'missing flags after -'],
    ['(?P<>a)', 'invalid named capture group'],
    ['(?P=n)', 'invalid named capture group'],
    ['\\1', 'invalid escape sequence'],
    ['(a)\\1', 'invalid escape sequence'],
    ['\\8', 'invalid escape sequence'],
    ['\\Z', 'invalid escape sequence'],
    ['\\e', 'invalid escape sequence'],
    ['\\E', 'invalid escape sequence'],
    ['\\é', 'invalid escape sequence'],
    ['\\x4', 'invalid escape sequence'],
    ['\\x{}', 'invalid escape sequence'],
    ['\\x{110000}', 'invalid escape sequence'],
    ['\\', 'trailing \\'],
    ['a\\', 'trailing \\'],
    ['[z-a]', 'bad character class range'],
    // C++ RE2 and RE2J both read `\d` as a class and refuse it as a range's end with this reason.
    ['[a-\\d]', 'invalid escape sequence'],
    ['[\\b]', 'invalid escape sequence'],
    ['[\\C]', 'invalid escape sequence'],
    ['[a-\\C]', 'invalid escape sequence'],
    ['\\C**', 'bad repetition operator'],
    ['[[:foo:]]', 'invalid character class range'],
    ['\\p{', 'invalid character class range'],
    ['\\pé', 'invalid character class range'],
  ])('refuses %s (%s)', (pattern, reason) => {
    expect(re2SyntaxError(pattern)).toBe(reason);
  });

  it('reads a long pattern in one pass of the engine', () => {
    expect(re2SyntaxError('(a|aa)+$'.repeat(500))).toBeUndefined();
    expect(re2SyntaxError(`${'(a|aa)+'.repeat(500)}\\1`)).toBe('invalid escape sequence');
  });

  it('handles nesting without recursion', () => {
    expect(re2SyntaxError(`${'('.repeat(500)}a${')'.repeat(500)}`)).toBeUndefined();
    expect(re2SyntaxError(`${'('.repeat(1001)}a${')'.repeat(1001)}`)).toBe('expression nests too deeply');
  });
});
