import { exceedsDistinctIdLength, isDistinctIdIllegal, normalizeDistinctId } from './distinct-id.util';

describe('isDistinctIdIllegal', () => {
  it.each([
    '',
    '   ',
    '\t',
    'anonymous',
    'ANONYMOUS',
    'Guest',
    'distinctid',
    'distinct_id',
    'ID',
    'not_authenticated',
    'email',
    'undefined',
    'UnDeFiNeD',
    'true',
    'FALSE',
    '[object Object]',
    'NaN',
    'None',
    'none',
    'null',
    '0',
    '"anonymous"',
    "'Guest'",
    '"null"',
    "'0'",
  ])('refuses %j', (id) => {
    expect(isDistinctIdIllegal(id)).toBe(true);
  });

  it.each([
    'nan',
    'NULL',
    'Null',
    'NONE',
    '[OBJECT OBJECT]',
    '00',
    'user-1',
    'anonymous-1',
    ' anonymous',
    '"user"',
  ])('accepts %j', (id) => {
    expect(isDistinctIdIllegal(id)).toBe(false);
  });
});

describe('exceedsDistinctIdLength', () => {
  it('counts characters as Postgres does, not UTF-16 units', () => {
    expect(exceedsDistinctIdLength('x'.repeat(400))).toBe(false);
    expect(exceedsDistinctIdLength('x'.repeat(401))).toBe(true);
    expect(exceedsDistinctIdLength('😀'.repeat(400))).toBe(false);
    expect(exceedsDistinctIdLength('😀'.repeat(401))).toBe(true);
  });
});

describe('normalizeDistinctId', () => {
  it('stringifies like PostHog and replaces what Postgres text cannot hold', () => {
    expect(normalizeDistinctId(42)).toBe('42');
    expect(normalizeDistinctId(null)).toBe('null');
    expect(normalizeDistinctId('a\u0000b')).toBe('a\ufffdb');
    expect(normalizeDistinctId('x\ud800y\udc00😀')).toBe('x\ufffdy\ufffd😀');
  });
});
