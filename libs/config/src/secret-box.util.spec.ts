import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ENCRYPTION_KEYS_FILE, openSecretBox, readEncryptionKeys, SecretBox } from './secret-box.util';

describe('SecretBox', () => {
  const key = () => randomBytes(32);

  it('opens what it sealed, and the sealed text shows nothing of the secret', () => {
    const box = new SecretBox([key()]);
    const sealed = box.seal('{"aws_secret_access_key":"s3cr3t"}');
    expect(sealed).not.toContain('s3cr3t');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+$/);
    expect(box.open(sealed)).toBe('{"aws_secret_access_key":"s3cr3t"}');
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });

  it('refuses tampered text and text sealed with a key it does not have', () => {
    const box = new SecretBox([key()]);
    const sealed = box.seal('secret');
    const flipped = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-1)}`;
    expect(() => box.open(flipped)).toThrow();
    expect(() => new SecretBox([key()]).open(sealed)).toThrow(/not among ENCRYPTION_KEYS/);
    expect(() => box.open('plain text')).toThrow('not a sealed secret');
  });

  it('rotates: a new first key seals, the old one still opens what it sealed', () => {
    const [old, current] = [key(), key()];
    const sealedBefore = new SecretBox([old]).seal('before');
    const rotated = new SecretBox([current, old]);
    expect(rotated.open(sealedBefore)).toBe('before');
    expect(new SecretBox([current]).open(rotated.seal('after'))).toBe('after');
  });

  it('reads ENCRYPTION_KEYS as comma-separated 32-byte base64 keys and refuses anything else', () => {
    const [a, b] = [key(), key()];
    expect(
      readEncryptionKeys({ ENCRYPTION_KEYS: `${a.toString('base64')}, ${b.toString('base64url')}` }),
    ).toEqual([a, b]);
    expect(readEncryptionKeys({})).toBeUndefined();
    expect(() => readEncryptionKeys({ ENCRYPTION_KEYS: randomBytes(16).toString('base64') })).toThrow(
      'ENCRYPTION_KEYS=***: each key must be 32 bytes in base64 (openssl rand -base64 32)',
    );
  });

  it('without ENCRYPTION_KEYS, generates one key file under DATA_DIR, owner-only, shared by concurrent openers', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-secret-box-'));
    try {
      const boxes = await Promise.all(Array.from({ length: 5 }, () => openSecretBox(undefined, dataDir)));
      const sealed = boxes[0].seal('shared');
      for (const box of boxes) expect(box.open(sealed)).toBe('shared');
      const file = path.join(dataDir, ENCRYPTION_KEYS_FILE);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(1);
      expect((await openSecretBox(undefined, dataDir)).open(sealed)).toBe('shared');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
