import { createHash } from 'node:crypto';
import { PERSON_UUID_NAMESPACE, personUuid } from './person-uuid.util';

// RFC 4122 §4.3 by hand: SHA-1 of namespace bytes + name, version 5, RFC variant.
function uuidV5ByHand(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('personUuid', () => {
  it('is the UUIDv5 of "<team_id>:<distinct_id>" in PostHog’s namespace', () => {
    expect(personUuid(2, 'abc')).toBe(uuidV5ByHand('2:abc', '932979b4-65c3-4424-8467-0b66ec27bc22'));
    expect(personUuid(2, 'abc')).toBe('fe709dba-6282-5f30-90f7-8ccbc7aa6f8a');
    expect(PERSON_UUID_NAMESPACE).toBe('932979b4-65c3-4424-8467-0b66ec27bc22');
  });

  it('differs between projects and between distinct ids, and handles any text', () => {
    expect(personUuid(1, 'user')).not.toBe(personUuid(2, 'user'));
    expect(personUuid(1, 'user')).not.toBe(personUuid(1, 'User'));
    expect(personUuid(7, 'ünïcødé 😀')).toBe(uuidV5ByHand('7:ünïcødé 😀', PERSON_UUID_NAMESPACE));
  });
});
