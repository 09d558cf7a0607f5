import { isInRollout, variantForHash } from './flag-hash.util';
import { formatJsonNumber, parseRustFloat, serializeJson } from './json-repr.util';

describe('values as PostHog compares them', () => {
  it('writes numbers the way serde_json does, not the way JavaScript does', () => {
    expect(formatJsonNumber(5)).toBe('5');
    expect(formatJsonNumber(-3)).toBe('-3');
    expect(formatJsonNumber(1.5)).toBe('1.5');
    expect(formatJsonNumber(0.00001)).toBe('0.00001');
    // JavaScript writes 0.000001 and 1e+21; Rust's ryu writes these.
    expect(formatJsonNumber(0.000001)).toBe('1e-6');
    expect(formatJsonNumber(1.25e-7)).toBe('1.25e-7');
    expect(formatJsonNumber(1e21)).toBe('1e21');
    expect(formatJsonNumber(Number.NaN)).toBe('null');
  });

  it('writes compact JSON with sorted keys', () => {
    expect(serializeJson({ b: [1, 'x', null], a: true })).toBe('{"a":true,"b":[1,"x",null]}');
  });

  it('parses numbers like Rust str::parse::<f64>', () => {
    expect(parseRustFloat('42')).toBe(42);
    expect(parseRustFloat('-1.5e3')).toBe(-1500);
    expect(parseRustFloat('.5')).toBe(0.5);
    expect(parseRustFloat('5.')).toBe(5);
    expect(parseRustFloat('inf')).toBe(Infinity);
    expect(parseRustFloat('NaN')).toBeNaN();
    for (const text of [' 1', '1 ', '', '.', '0x10', '1_000', '12abc'])
      expect(parseRustFloat(text)).toBeUndefined();
  });
});

describe('rollout and variant boundaries', () => {
  it('includes a hash equal to the rollout', () => {
    expect(isInRollout(0.5, 50)).toBe(true);
    expect(isInRollout(0.5000001, 50)).toBe(false);
    expect(isInRollout(0, 0)).toBe(true);
  });

  it('gives a hash on a variant boundary to the next variant', () => {
    const variants = [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ];
    expect(variantForHash(0.4999999, variants)).toBe('control');
    expect(variantForHash(0.5, variants)).toBe('test');
    expect(variantForHash(0.99, [{ key: 'only', rollout_percentage: 60 }])).toBeNull();
  });
});
