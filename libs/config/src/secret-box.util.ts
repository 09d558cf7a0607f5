import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Environment, readString } from './env.util';

/** Under DATA_DIR, for a deployment without ENCRYPTION_KEYS. */
export const ENCRYPTION_KEYS_FILE = 'encryption-keys';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';

/** Base64 keys of 32 bytes, comma-separated, the first one encrypting. */
export function readEncryptionKeys(env: Environment): Buffer[] | undefined {
  const value = readString(env, 'ENCRYPTION_KEYS');
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((text) =>
      parseKey(
        text.trim(),
        () =>
          new ConfigError(
            'ENCRYPTION_KEYS',
            '***',
            'each key must be 32 bytes in base64 (openssl rand -base64 32)',
          ),
      ),
    );
}

function parseKey(text: string, failure: () => Error): Buffer {
  const key = Buffer.from(text, /[-_]/.test(text) ? 'base64url' : 'base64');
  if (key.length !== KEY_BYTES) throw failure();
  return key;
}

/** Stored beside what it encrypted, so that rotation finds the right key. */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/**
 * AES-256-GCM, sealing with the first key and opening with the one the text names: keys rotate by
 * putting the new one first. Sealed text: `v1.<key id>.<iv>.<ciphertext and tag>` (base64url).
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  private readonly current: { id: string; key: Buffer };

  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('a SecretBox needs at least one key');
    this.keys = new Map(keys.map((key) => [keyId(key), key]));
    this.current = { id: keyId(keys[0]), key: keys[0] };
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.current.id, iv.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(text: string): string {
    const [version, id, iv, sealed] = text.split('.');
    if (version !== VERSION || !id || !iv || sealed === undefined) throw new Error('not a sealed secret');
    const key = this.keys.get(id);
    if (!key) throw new Error(`sealed with key ${id}, which is not among ENCRYPTION_KEYS`);
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}

/** ENCRYPTION_KEYS when set, else the key file under DATA_DIR, generated on first use, owner-only. */
export async function openSecretBox(
  keys: readonly Buffer[] | undefined,
  dataDir: string,
): Promise<SecretBox> {
  if (keys) return new SecretBox(keys);
  const file = path.join(dataDir, ENCRYPTION_KEYS_FILE);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Written aside, then linked into place: link fails if the file exists, so a concurrent process
  // never reads a half-written key, and the first one to link wins.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(draft);
  }
  const lines = (await readFile(file, 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return new SecretBox(
    lines.map((line) => parseKey(line, () => new Error(`${file}: each line must be a 32-byte base64 key`))),
  );
}
