/**
 * Java's `Utils.murmur2` and `toPositive`, as kafkajs's DefaultPartitioner: every producer of a topic
 * must map a key to the same partition, or one person's events lose their order.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** A signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= data[whole + 2] << 16;
  if (rest >= 2) h ^= data[whole + 1] << 8;
  if (rest >= 1) {
    h ^= data[whole];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Before the modulo: the sign bit cleared (Java's `toPositive`). */
export function keyHash(key: Uint8Array): number {
  return murmur2(key) & 0x7fffffff;
}
