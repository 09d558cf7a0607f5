import { createHash } from 'node:crypto';

import type { FlagVariant } from './flag-definition';

/** PostHog's `LONG_SCALE`: the largest 15-hex-digit number. */
const LONG_SCALE = 0xfffffffffffffffn;

/**
 * PostHog's bucketing hash: SHA-1 of `<prefix><identifier><salt>`, the first 15 hex digits read
 * as an integer, divided by 0xFFFFFFFFFFFFFFF. Flags use the prefix `<flag key>.`; holdouts use
 * `holdout-`.
 *
 * TRICKY: the integer has 60 bits, more than a double holds. Every PostHog implementation rounds
 * it to a double first (Rust `u64 as f64`, Python `int / float(LONG_SCALE)`, JS `parseInt`), and
 * the divisor rounds to exactly 2^60, so the result is round(n) / 2^60. `Number(BigInt)` rounds
 * to nearest-even like all three, and the division by a power of two is exact.
 */
export function calculateHash(prefix: string, identifier: string, salt = ''): number {
  const digest = createHash('sha1').update(`${prefix}${identifier}${salt}`, 'utf8').digest();
  // The first 8 bytes shifted right by 4 bits are the first 15 hex digits.
  const value = digest.readBigUInt64BE(0) >> 4n;
  return Number(value) / Number(LONG_SCALE);
}

/**
 * The hash of one flag for one identifier. An empty identifier hashes to 0, as PostHog's flags
 * service does (it only happens when no identifier could be resolved).
 */
export function flagHash(flagKey: string, identifier: string, salt = ''): number {
  if (identifier === '') return 0;
  return calculateHash(`${flagKey}.`, identifier, salt);
}

/** Whether a hash is inside a rollout: PostHog includes the boundary (`hash <= pct / 100`). */
export function isInRollout(hash: number, rolloutPercentage: number): boolean {
  return hash <= rolloutPercentage / 100;
}

/**
 * The variant whose range holds the hash. Ranges are laid end to end in declared order, summed in
 * floating point left to right exactly as PostHog does, each half-open `[min, max)`; a hash past
 * the last range (percentages summing under 100) gets no variant.
 */
export function variantForHash(hash: number, variants: readonly FlagVariant[]): string | null {
  let cumulative = 0;
  for (const variant of variants) {
    cumulative += variant.rollout_percentage / 100;
    if (hash < cumulative) return variant.key;
  }
  return null;
}
