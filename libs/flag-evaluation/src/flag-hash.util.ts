import { hash } from 'node:crypto';

import type { FlagVariant } from './flag-definition.types';

/**
 * `calculate_hash` of `rust/feature-flags/src/flags/flag_matching_utils.rs`: SHA-1, the first 15
 * hex digits over 0xFFFFFFFFFFFFFFF. TRICKY: 60 bits do not fit a double; every PostHog SDK rounds
 * to one first and the divisor rounds to 2^60, as `parseInt` (exact for radix 16) and this do.
 * NOTE: one-shot `hash()` to hex, far cheaper than `createHash()` and a BigInt on the `/flags` path.
 */
export function calculateHash(prefix: string, identifier: string, salt = ''): number {
  const digest = hash('sha1', `${prefix}${identifier}${salt}`);
  return parseInt(digest.slice(0, 15), 16) / 2 ** 60;
}

/** An empty identifier (none could be resolved) hashes to 0, as PostHog's flags service does. */
export function flagHash(flagKey: string, identifier: string, salt = ''): number {
  if (identifier === '') return 0;
  return calculateHash(`${flagKey}.`, identifier, salt);
}

/** PostHog includes the boundary. */
export function isInRollout(hash: number, rolloutPercentage: number): boolean {
  return hash <= rolloutPercentage / 100;
}

/**
 * Half-open ranges in declared order, summed in floating point left to right as PostHog does; past
 * the last range (percentages summing under 100) there is no variant.
 */
export function variantForHash(hash: number, variants: readonly FlagVariant[]): string | null {
  let cumulative = 0;
  for (const variant of variants) {
    cumulative += variant.rollout_percentage / 100;
    if (hash < cumulative) return variant.key;
  }
  return null;
}
