import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { openDataSource } from '@hogbase/postgres';
import { assertTestDatabaseName } from '@hogbase/test-support';

const ORGANIZATION_ID = '00000000-0000-4000-8000-00000000be4c';

export interface Project {
  id: number;
  /** The project API key (`phc_…`) SDK bodies carry. */
  token: string;
}

export interface BenchDatabase {
  url: string;
  /** Each benchmark round works in its own. */
  createProject(name: string): Promise<Project>;
  /** Safe to call twice. */
  drop(): Promise<void>;
}

async function withServer<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Migrated like production; the name contains `test`, so the test-support guard lets it be dropped. */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `hogbase_test_pipeline_bench_${process.pid}`;
  assertTestDatabaseName(name);
  const drop = () =>
    withServer(serverUrl, async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
    });
  await drop();
  await withServer(serverUrl, (client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const dataSource = await openDataSource({ url: url.toString() });
    try {
      await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Bench', 'bench')`, [
        ORGANIZATION_ID,
      ]);
    } finally {
      await dataSource.destroy();
    }
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }

  return {
    url: url.toString(),
    async createProject(projectName) {
      const pool = new Pool({ connectionString: url.toString(), max: 1 });
      try {
        const token = `phc_bench_${randomUUID().replaceAll('-', '')}`;
        const { rows } = await pool.query<{ id: number }>(
          `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, $3, $4) RETURNING id`,
          [randomUUID(), ORGANIZATION_ID, projectName, token],
        );
        return { id: rows[0].id, token };
      } finally {
        await pool.end();
      }
    },
    drop,
  };
}
