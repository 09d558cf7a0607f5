import { hash } from 'node:crypto';

import type { FlagVariant } from './flag-definition.types';

/**
 * `calculate_hash` of `rust/feature-flags/src/flags/flag_matching_utils.rs`: SHA-1's first 15 hex
 * digits over 0xFFFFFFFFFFFFFFF. TRICKY: SDKs round the 60 bits to a double and the divisor to 2^60,
 * as `parseInt` and this do. One-shot `hash()` spares `createHash()` and a BigInt on `/flags`.
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
