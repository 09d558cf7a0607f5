import { Pool } from 'pg';
import { createTestDatabase } from '@hogbase/test-support';
import { openDataSource } from '../data-source.util';

export interface MigratedTestDatabase {
  url: string;
  name: string;
  pool: Pool;
  close(): Promise<void>;
}

/** A new database on the test server (TEST_DATABASE_URL) with every migration run, and a pool on it. */
export async function createMigratedTestDatabase(poolSize = 4): Promise<MigratedTestDatabase> {
  const database = await createTestDatabase();
  try {
    await (await openDataSource({ url: database.url })).destroy();
  } catch (error) {
    await database.drop();
    throw error;
  }
  const pool = new Pool({ connectionString: database.url, max: poolSize });
  return {
    url: database.url,
    name: database.name,
    pool,
    async close() {
      try {
        await pool.end();
      } finally {
        await database.drop();
      }
    },
  };
}
