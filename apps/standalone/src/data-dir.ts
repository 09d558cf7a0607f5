import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { StandaloneConfig } from '@hogbase/config';
import { restrictToOwner } from '@hogbase/postgres';

/** What a new file or directory of this process may grant beyond its owner: nothing. */
export const OWNER_ONLY_UMASK = 0o077;

/**
 * Makes `dataDir` readable by its owner only: events, persons, e-mails and key hashes live there.
 *
 * SECURITY: sets the process umask first, so that what chDB and this process create from now on is
 * born 0600/0700 (the umask is per process, so it covers chDB's native threads too). Then creates
 * `dataDir` with 0700 and strips group and other bits from what an older version left readable.
 */
export async function secureDataDir(dataDir: string): Promise<void> {
  process.umask(OWNER_ONLY_UMASK);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await restrictToOwner(dataDir);
}

/** DATA_DIR, and chDB's data path when CLICKHOUSE_DATA_PATH puts it outside DATA_DIR: before anything opens a file there. */
export async function secureDataDirs({ management, clickhouse }: StandaloneConfig): Promise<void> {
  await secureDataDir(management.dataDir);
  if (!clickhouse.url && path.relative(management.dataDir, clickhouse.dataPath).startsWith('..')) {
    await secureDataDir(clickhouse.dataPath);
  }
}
