import { sanitizeText, scalarText, toJsonb } from './postgres-text.util';

describe('toJsonb', () => {
  it('replaces NUL and lone surrogates, in keys and values, at any depth', () => {
    const json = toJsonb({ 'k\u0000': ['v\u0000', { deep: 'x\ud800', low: '\udc00' }], pair: '😀' });
    expect(JSON.parse(json)).toEqual({
      'k\ufffd': ['v\ufffd', { deep: 'x\ufffd', low: '\ufffd' }],
      pair: '😀',
    });
  });

  it('leaves an escaped backslash followed by "u0000" alone', () => {
    const value = { text: '\\u0000 and \\\\u0000 and \\ud800' };
    expect(JSON.parse(toJsonb(value))).toEqual(value);
  });

  it('is plain JSON.stringify when nothing needs replacing', () => {
    const value = { a: 1, b: 'é', c: [true, null], d: '\n\t"' };
    expect(toJsonb(value)).toBe(JSON.stringify(value));
  });
});

describe('sanitizeText', () => {
  it('keeps valid text and surrogate pairs', () => {
    expect(sanitizeText('héllo 😀')).toBe('héllo 😀');
    expect(sanitizeText('\ud83d')).toBe('\ufffd');
  });
});

describe('scalarText', () => {
  it('stringifies scalars only', () => {
    expect(scalarText('a')).toBe('a');
    expect(scalarText(12)).toBe('12');
    expect(scalarText(false)).toBe('false');
    expect(scalarText(null)).toBeNull();
    expect(scalarText({})).toBeNull();
    expect(scalarText(['a'])).toBeNull();
  });
});
