import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase } from '@hogbase/test-support';
import { openDataSource, postgresDataSourceOptions } from '../data-source.util';
import { MIGRATIONS } from '../migrations';
import { startTemporaryEmbeddedPostgres } from './test-postgres.util';

/** For `describe.each`: the machine's Postgres, and the embedded one of `npm start`. */
export const POSTGRES_ENGINES = [
  ['the machine Postgres', 'server'],
  ['the embedded Postgres (PGlite)', 'embedded'],
] as const;

export type PostgresEngine = (typeof POSTGRES_ENGINES)[number][1];

export interface MigrationTestDatabase {
  url: string;
  client: Client;
  stop: () => Promise<void>;
}

/** A new database on `engine` migrated up to before `migration` (all when none is named), with a client. */
export async function startMigrationTestDatabase(
  engine: PostgresEngine,
  tempPrefix: string,
  migration?: (typeof MIGRATIONS)[number],
): Promise<MigrationTestDatabase> {
  let url: string;
  let remove: () => Promise<void>;
  if (engine === 'server') {
    const database = await createTestDatabase();
    url = database.url;
    remove = () => database.drop();
  } else {
    const embedded = await startTemporaryEmbeddedPostgres(tempPrefix);
    url = embedded.url;
    remove = () => embedded.stop();
  }
  const client = new Client({ connectionString: url });
  try {
    if (migration) {
      const before = new DataSource({
        ...postgresDataSourceOptions({ url }),
        migrations: MIGRATIONS.slice(0, MIGRATIONS.indexOf(migration)),
      });
      await before.initialize();
      try {
        await before.runMigrations({ transaction: 'each' });
      } finally {
        await before.destroy();
      }
    } else {
      await (await openDataSource({ url })).destroy();
    }
    await client.connect();
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    url,
    client,
    stop: async () => {
      try {
        await client.end();
      } finally {
        await remove();
      }
    },
  };
}
