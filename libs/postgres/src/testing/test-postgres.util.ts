import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { POSTGRES_TIMEOUTS, type PostgresTimeouts } from '../data-source.util';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../embedded-postgres.server';

export function timeouts(overrides: Partial<PostgresTimeouts>): PostgresTimeouts {
  return { ...POSTGRES_TIMEOUTS, ...overrides };
}

/** An embedded Postgres on a new `<tmpdir>/<tempPrefix>…` data directory; `stop()` also removes it. */
export async function startTemporaryEmbeddedPostgres(tempPrefix: string): Promise<EmbeddedPostgres> {
  const dataDir = await mkdtemp(path.join(tmpdir(), tempPrefix));
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true });
  try {
    const embedded = await startEmbeddedPostgres(dataDir);
    return {
      ...embedded,
      async stop() {
        try {
          await embedded.stop();
        } finally {
          await removeDataDir();
        }
      },
    };
  } catch (error) {
    await removeDataDir();
    throw error;
  }
}
