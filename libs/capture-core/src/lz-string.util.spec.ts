import LZString from 'lz-string';

import { decompressLzStringBase64, LzStringOutputTooLongError } from './lz-string.util';

/** A deterministic pseudo-random generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe('decompressLzStringBase64', () => {
  it('reads what posthog-js compressed with LZString.compressToBase64', () => {
    const json = JSON.stringify([
      { event: '$pageview', properties: { distinct_id: 'ü-1', $current_url: '/' } },
    ]);
    expect(decompressLzStringBase64(LZString.compressToBase64(json), 1e6)).toBe(json);
  });

  it('agrees with the lz-string package on random texts, including non-Latin and surrogate pairs', () => {
    const next = random(42);
    const alphabet = ['a', 'b', 'c', '{', '"', ':', 'é', '中', '😀', '\u0000', ' '];
    for (let round = 0; round < 200; round++) {
      const length = Math.floor(next() * 500);
      let text = '';
      for (let index = 0; index < length; index++) text += alphabet[Math.floor(next() * alphabet.length)];
      const compressed = LZString.compressToBase64(text);
      expect(decompressLzStringBase64(compressed, 1e6)).toBe(text === '' ? null : text);
    }
  });

  it('agrees with the lz-string package on random garbage, or answers null where it has nothing sensible', () => {
    const next = random(7);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
    for (let round = 0; round < 500; round++) {
      let text = '';
      const length = 1 + Math.floor(next() * 60);
      for (let index = 0; index < length; index++) text += alphabet[Math.floor(next() * alphabet.length)];
      let expected: string | null;
      try {
        expected = LZString.decompressFromBase64(text);
      } catch {
        expected = null; // the package throws on some garbage (a TypeError on an undefined entry)
      }
      const actual = decompressLzStringBase64(text, 1e6);
      // A first code of 3 is invalid: the package carries on with an undefined entry and yields
      // arbitrary text; we answer null. Everywhere else we agree, "" (invalid) being our null.
      const firstValue = alphabet.indexOf(text.charAt(0));
      if ((firstValue & 0b110000) === 0b110000) expect(actual).toBeNull();
      else expect(actual).toBe(expected === '' ? null : expected);
    }
  });

  it('stops as soon as the output passes the bound (lz bomb)', () => {
    // Output grows quadratically with input: 300 kB of 'a' compress to about 1 kB.
    const compressed = LZString.compressToBase64('a'.repeat(300_000));
    expect(compressed.length).toBeLessThan(2_000);
    expect(() => decompressLzStringBase64(compressed, 100_000)).toThrow(LzStringOutputTooLongError);
    expect(decompressLzStringBase64(compressed, 300_000)).toHaveLength(300_000);
  });

  it('answers null for empty input', () => {
    expect(decompressLzStringBase64('', 10)).toBeNull();
  });
});
