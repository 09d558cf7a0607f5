import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 of a random integer, most significant digit first, as PostHog's generate_random_token. */
function randomBase62(byteCount: number): string {
  let value = BigInt(`0x${randomBytes(byteCount).toString('hex')}`);
  let encoded = '';
  while (value > 0n) {
    encoded = BASE62[Number(value % 62n)] + encoded;
    value /= 62n;
  }
  return encoded || '0';
}

export function generatePersonalApiKey(): string {
  return `phx_${randomBase62(35)}`;
}

export function generateProjectSecretApiKey(): string {
  return `phs_${randomBase62(35)}`;
}

export function generateProjectApiToken(): string {
  return `phc_${randomBase62(32)}`;
}

export function generateRandomId(): string {
  return randomBase62(24);
}

/** PostHog's sha256 mode: unsalted, because the key itself is 200+ bits of randomness. */
export function hashPersonalApiKey(key: string): string {
  return `sha256$${createHash('sha256').update(key).digest('hex')}`;
}

export function maskApiKey(key: string): string {
  return `${key.slice(0, 4)}...${key.slice(-4)}`;
}
