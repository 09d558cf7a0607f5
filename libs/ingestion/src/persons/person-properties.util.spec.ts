import { computePropertyUpdate, initialPersonProperties, jsonEquals } from './person-properties.util';

describe('computePropertyUpdate', () => {
  it('sets $set_once keys the person lacks and $set keys whose value differs', () => {
    const update = computePropertyUpdate(
      'clicked',
      { $set_once: { a: 1, b: 1 }, $set: { c: 2, d: { x: 1 } } },
      { a: 0, c: 2, d: { x: 1 } },
    );
    expect(update.toSet).toEqual({ b: 1 });
    expect(update.operations).toEqual({ b: 'set_once' });
    expect(update.triggersWrite).toBe(true);
  });

  it('lets $set win over $set_once for the same key', () => {
    const update = computePropertyUpdate('x', { $set_once: { a: 'once' }, $set: { a: 'set' } }, {});
    expect(update.toSet).toEqual({ a: 'set' });
    expect(update.operations).toEqual({ a: 'set' });
  });

  it('unsets keys the person has, from an array or an object, ignoring non-strings', () => {
    expect(computePropertyUpdate('x', { $unset: ['a', 'b', 3] }, { a: 1 }).toUnset).toEqual(['a']);
    expect(computePropertyUpdate('x', { $unset: { a: true } }, { a: 1 }).toUnset).toEqual(['a']);
    expect(computePropertyUpdate('x', { $unset: 'a' }, { a: 1 }).toUnset).toEqual([]);
  });

  it('does not trigger a write for a change of a volatile property alone on a plain event', () => {
    const person = { $current_url: '/a', $browser: 'Firefox' };
    const pageview = computePropertyUpdate('$pageview', { $set: { $current_url: '/b' } }, person);
    expect(pageview.toSet).toEqual({ $current_url: '/b' });
    expect(pageview.triggersWrite).toBe(false);
    // A new key, another changed key, or a person event all make it worth writing.
    expect(computePropertyUpdate('$pageview', { $set: { $pathname: '/b' } }, person).triggersWrite).toBe(
      true,
    );
    expect(
      computePropertyUpdate('$pageview', { $set: { $current_url: '/b', plan: 'pro' } }, person).triggersWrite,
    ).toBe(true);
    expect(computePropertyUpdate('$set', { $set: { $current_url: '/b' } }, person).triggersWrite).toBe(true);
  });

  it('ignores person updates from $exception and $$heatmap events', () => {
    expect(computePropertyUpdate('$exception', { $set: { a: 1 } }, {}).toSet).toEqual({});
    expect(computePropertyUpdate('$$heatmap', { $unset: ['a'] }, { a: 1 }).toUnset).toEqual([]);
  });

  it('treats inherited member names as ordinary keys', () => {
    const update = computePropertyUpdate(
      'x',
      JSON.parse(
        '{"$set_once": {"toString": 1, "constructor": 2}, "$set": {"__proto__": {"polluted": true}}}',
      ),
      {},
    );
    expect(Object.keys(update.toSet)).toEqual(['toString', 'constructor', '__proto__']);
    expect(Object.getPrototypeOf(update.toSet)).toBe(Object.prototype);
    expect(computePropertyUpdate('x', { $unset: ['toString'] }, {}).toUnset).toEqual([]);
  });

  it('treats malformed $set and $set_once as empty', () => {
    const update = computePropertyUpdate('x', { $set: 'a=1', $set_once: [1, 2] }, {});
    expect(update.toSet).toEqual({});
  });
});

describe('initialPersonProperties', () => {
  it('is $set_once, then $set over it, plus the creator event', () => {
    expect(initialPersonProperties({ $set_once: { a: 1, b: 1 }, $set: { b: 2 } }, 'event-uuid')).toEqual({
      properties: { a: 1, b: 2, $creator_event_uuid: 'event-uuid' },
      operations: { a: 'set_once', b: 'set' },
    });
  });
});

describe('jsonEquals', () => {
  it('compares JSON values structurally', () => {
    expect(jsonEquals({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEquals({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEquals({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(jsonEquals([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(jsonEquals(null, {})).toBe(false);
    expect(jsonEquals('1', 1)).toBe(false);
  });
});
