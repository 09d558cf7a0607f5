import { randomBytes } from 'node:crypto';
import { keyHash, murmur2 } from './murmur2.util';

// kafkajs's implementation, which the events topic has been partitioned with so far.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (
  key: Buffer,
) => number;

describe('murmur2', () => {
  it("matches kafkajs's partitioner on keys of every length and on random bytes", () => {
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      '1:user-42',
      '17:0190b8f0-1111-7abc-8def-123456789abc',
      '1:ünïcödé 🎉',
      ...Array.from({ length: 2_000 }, (_, i) => randomBytes(i % 67).toString('latin1')),
    ];
    for (const key of keys) {
      const bytes = Buffer.from(key, key.startsWith('1:') || key.length < 5 ? 'utf8' : 'latin1');
      expect({ key, hash: murmur2(bytes) }).toEqual({ key, hash: kafkajsMurmur2(bytes) });
    }
  });

  it('keeps Java reference values (Kafka Utils.murmur2 test vectors)', () => {
    // From Apache Kafka's UtilsTest.testMurmur2.
    const vectors: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ];
    for (const [key, expected] of vectors) expect(murmur2(Buffer.from(key))).toBe(expected);
    expect(keyHash(Buffer.from('foobar'))).toBe(-790332482 & 0x7fffffff);
  });
});
