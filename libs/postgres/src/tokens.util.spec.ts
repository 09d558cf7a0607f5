import { createHash } from 'node:crypto';
import {
  generatePersonalApiKey,
  generateProjectApiToken,
  generateProjectSecretApiKey,
  hashPersonalApiKey,
  maskApiKey,
} from './tokens.util';

describe('tokens', () => {
  it('makes personal keys and project tokens with their prefixes and base62 bodies', () => {
    expect(generatePersonalApiKey()).toMatch(/^phx_[0-9A-Za-z]{40,48}$/);
    expect(generateProjectApiToken()).toMatch(/^phc_[0-9A-Za-z]{36,44}$/);
    expect(generateProjectSecretApiKey()).toMatch(/^phs_[0-9A-Za-z]{40,48}$/);
    expect(generatePersonalApiKey()).not.toBe(generatePersonalApiKey());
    expect(generateProjectSecretApiKey()).not.toBe(generateProjectSecretApiKey());
  });

  it("hashes keys in PostHog's sha256 format", () => {
    const key = 'phx_example';
    expect(hashPersonalApiKey(key)).toBe(`sha256$${createHash('sha256').update(key).digest('hex')}`);
  });

  it('masks all but the first and last four characters', () => {
    expect(maskApiKey('phx_abcdefghijklmnop')).toBe('phx_...mnop');
  });
});
