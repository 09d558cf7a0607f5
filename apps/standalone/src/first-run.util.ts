import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { BootstrapService, type InitialCredentials } from '@hogbase/management-api';

export const INITIAL_CREDENTIALS_FILE = 'initial-credentials.json';

/** Writes the first admin's credentials owner-only; returns the file's path when it wrote it. */
export async function ensureInitialCredentials(
  dataDir: string,
  email: string,
  dataSource: DataSource,
  bootstrap: BootstrapService,
): Promise<string | undefined> {
  const file = path.join(dataDir, INITIAL_CREDENTIALS_FILE);
  const exists = await access(file).then(
    () => true,
    () => false,
  );
  if (exists) return undefined;
  const [{ count }] = await dataSource.query<{ count: string }[]>(
    'SELECT count(*)::text AS count FROM users',
  );
  if (count !== '0') return undefined;
  const credentials: InitialCredentials = await bootstrap.bootstrap({ email });
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}

/** Logs the file's name, never the key. */
export async function firstRun(
  app: INestApplicationContext,
  dataDir: string,
  email: string,
  logger: Logger,
): Promise<void> {
  const file = await ensureInitialCredentials(dataDir, email, app.get(DataSource), app.get(BootstrapService));
  if (file) logger.info({ file }, 'first run: initial credentials written');
}
