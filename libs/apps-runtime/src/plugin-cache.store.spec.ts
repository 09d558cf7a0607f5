import { PluginCache } from './plugin-cache.store';

const KEY_OVERHEAD = 64;
const ELEMENT_OVERHEAD = 16;

describe('PluginCache budgets', () => {
  it('refuses a write past the app’s own budget with an error naming it, and keeps what it had', () => {
    const cache = new PluginCache({ maxBytesPerNamespace: 1_000, maxBytes: 10_000 });
    cache.set('app-a', 'first', 'x'.repeat(600), null);
    expect(() => cache.set('app-a', 'second', 'x'.repeat(600), null)).toThrow(
      /^meta\.cache is full: this app's keys hold 669 of its 1000 bytes \(APPS_CACHE_MB_PER_APP\)/,
    );
    expect(() => cache.set('app-a', 'huge', 'x'.repeat(2_000), null)).toThrow(
      /larger than this app's cache budget of 1000 bytes \(APPS_CACHE_MB_PER_APP\)/,
    );
    expect(cache.get('app-a', 'first')).toHaveLength(600);
    expect(cache.get('app-a', 'second')).toBeNull();
    // Another app has a budget of its own.
    cache.set('app-b', 'first', 'x'.repeat(600), null);
    expect(cache.get('app-b', 'first')).toHaveLength(600);
    // Replacing a value counts the difference only.
    cache.set('app-a', 'first', 'x'.repeat(900), null);
    expect(cache.usage('app-a')).toEqual({ bytes: 'first'.length + KEY_OVERHEAD + 900, keys: 1 });
  });

  it('counts list elements: lpush past the budget is refused, lpop and lrem give room back', () => {
    const cache = new PluginCache({ maxBytesPerNamespace: 1_000, maxBytes: 10_000 });
    const element = 'e'.repeat(84); // 100 bytes with its overhead
    expect(
      cache.lpush(
        'app',
        'queue',
        Array.from({ length: 9 }, () => element),
      ),
    ).toBe(9);
    expect(cache.usage('app').bytes).toBe('queue'.length + KEY_OVERHEAD + 9 * (84 + ELEMENT_OVERHEAD));
    expect(() => cache.lpush('app', 'queue', [element])).toThrow(/meta\.cache refused a value of 1069 bytes/);
    expect(cache.llen('app', 'queue')).toBe(9);
    expect(cache.lpop('app', 'queue', 2)).toHaveLength(2);
    expect(cache.lrem('app', 'queue', 0, element)).toBe(7);
    expect(cache.usage('app').bytes).toBe('queue'.length + KEY_OVERHEAD);
    expect(cache.lpush('app', 'queue', [element, element])).toBe(2);
  });

  it('drops the app’s expired keys to make room before refusing a write', () => {
    const now = jest.spyOn(Date, 'now');
    try {
      now.mockReturnValue(1_000_000);
      const cache = new PluginCache({ maxBytesPerNamespace: 1_000, maxBytes: 10_000 });
      cache.set('app', 'short-lived', 'x'.repeat(800), 10);
      now.mockReturnValue(1_000_000 + 11_000);
      cache.set('app', 'next', 'x'.repeat(800), null);
      expect(cache.get('app', 'next')).toHaveLength(800);
      expect(cache.usage('app').keys).toBe(1);
    } finally {
      now.mockRestore();
    }
  });

  it('keeps the whole cache within its budget by dropping the oldest written keys of any app', () => {
    const cache = new PluginCache({ maxBytesPerNamespace: 1_000, maxBytes: 2_000 });
    cache.set('app-a', 'old', 'x'.repeat(800), null);
    cache.set('app-b', 'older', 'x'.repeat(800), null);
    cache.set('app-c', 'new', 'x'.repeat(800), null);
    expect(cache.get('app-a', 'old')).toBeNull();
    expect(cache.get('app-b', 'older')).toHaveLength(800);
    expect(cache.get('app-c', 'new')).toHaveLength(800);
    expect(cache.usage('app-a')).toEqual({ bytes: 0, keys: 0 });
  });

  it('answers as Redis for incr, expire and lrange', () => {
    const cache = new PluginCache();
    expect(cache.incr('app', 'hits')).toBe(1);
    expect(cache.incr('app', 'hits')).toBe(2);
    expect(cache.expire('app', 'hits', 60)).toBe(true);
    expect(cache.expire('app', 'missing', 60)).toBe(false);
    cache.lpush('app', 'queue', ['a', 'b', 'c']);
    expect(cache.lrange('app', 'queue', 0, -1)).toEqual(['c', 'b', 'a']);
    expect(cache.lrange('app', 'queue', -2, -1)).toEqual(['b', 'a']);
  });
});
