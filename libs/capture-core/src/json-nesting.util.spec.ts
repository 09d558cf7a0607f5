import { MAX_JSON_NESTING, nestsAtLeast } from './json-nesting.util';

describe('nestsAtLeast', () => {
  const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  it('counts arrays and objects, the outermost included, up to the limit', () => {
    for (const text of [arrays(MAX_JSON_NESTING), objects(MAX_JSON_NESTING)]) {
      expect(nestsAtLeast(text, MAX_JSON_NESTING)).toBe(true);
    }
    for (const text of [arrays(MAX_JSON_NESTING - 1), objects(MAX_JSON_NESTING - 1)]) {
      expect(nestsAtLeast(text, MAX_JSON_NESTING)).toBe(false);
    }
    expect(nestsAtLeast(`{"a":[{"b":${arrays(3)}}]}`, 6)).toBe(true);
    expect(nestsAtLeast(`{"a":[{"b":${arrays(3)}}]}`, 7)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes and backslashes included', () => {
    const brackets = '{['.repeat(200);
    expect(nestsAtLeast(JSON.stringify({ text: brackets }), 3)).toBe(false);
    expect(nestsAtLeast(JSON.stringify({ text: `"${brackets}` }), 3)).toBe(false);
    expect(nestsAtLeast(JSON.stringify({ text: `\\`, after: [[[]]] }), 4)).toBe(true);
    expect(nestsAtLeast(JSON.stringify({ text: `\\"${brackets}`, after: [[]] }), 4)).toBe(false);
  });

  it('takes many siblings, however many brackets, when none nests deep', () => {
    const wide = JSON.stringify({
      batch: Array.from({ length: 1_000 }, (_, index) => ({ index, list: [] })),
    });
    expect(nestsAtLeast(wide, MAX_JSON_NESTING)).toBe(false);
    expect(nestsAtLeast(wide, 4)).toBe(true);
  });
});
