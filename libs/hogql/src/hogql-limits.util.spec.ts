import { checkExpressionText, DEFAULT_HOGQL_LIMITS, resolveLimits } from './hogql-limits.util';

const limits = resolveLimits({ maxExpressionLength: 50, maxTokens: 10, maxNestingDepth: 3 });
const check = (text: string) => () => checkExpressionText(text, limits);

describe('checkExpressionText', () => {
  it('passes ordinary expressions', () => {
    expect(check("lower(event) = 'a'")).not.toThrow();
    expect(() =>
      checkExpressionText("toStartOfDay(toDateTime(properties.x)) > '2024-01-01'", DEFAULT_HOGQL_LIMITS),
    ).not.toThrow();
  });

  it('counts length in characters, not UTF-16 units', () => {
    expect(check(`'${'💥'.repeat(48)}'`)).not.toThrow();
    expect(check(`'${'💥'.repeat(49)}'`)).toThrow('is longer than 50 characters');
  });

  it('counts nesting of (, [ and {', () => {
    expect(check('f(g(h(x)))')).not.toThrow();
    expect(check('f(g([h(x)]))')).toThrow('Nesting deeper than 3 levels');
    expect(check('{a: {b: {c: {d}}}}')).toThrow('Nesting deeper than 3 levels');
  });

  it('ignores brackets inside strings and quoted identifiers', () => {
    expect(check("'((((((' = `((((`")).not.toThrow();
    expect(check('\'it\'\'s ((((\' = "a""(((("')).not.toThrow();
    expect(check("'\\'((((' = 1")).not.toThrow();
  });

  it('does not let closing brackets in text hide real nesting', () => {
    expect(check("f(')))))', g(h(i(x))))")).toThrow('Nesting deeper than 3 levels');
  });

  it('counts tokens', () => {
    expect(check('a+b+c+d+e')).not.toThrow();
    expect(check('a+b+c+d+e+f')).toThrow('More than 10 tokens');
  });

  it.each(['a -- b', 'a /* b */', 'a // b', 'a # b'])('refuses the comment in %j', (text) => {
    expect(check(text)).toThrow('Comments are not allowed');
  });

  it('allows comment-like text inside strings', () => {
    expect(check("'-- /* # //'")).not.toThrow();
  });

  it.each(["f'{x}'", "F'x'"])('refuses the template string %j', (text) => {
    expect(check(text)).toThrow('Template strings are not allowed');
  });

  it('allows identifiers ending in f before a string elsewhere', () => {
    expect(check("if('a', 1, 2)")).not.toThrow();
  });

  it.each(["'abc", '`abc', '"abc', "'abc\\'"])('refuses unterminated quotes in %j', (text) => {
    expect(check(text)).toThrow('Unterminated quoted text');
  });

  it('refuses empty expressions', () => {
    expect(check('  \n ')).toThrow('Empty expression');
  });
});
