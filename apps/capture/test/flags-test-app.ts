import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import { openDataSource } from '@hogbase/postgres';
import { InProcessBus } from '@hogbase/queue';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import {
  ProjectTokenCache,
  buildCaptureApp,
  createCapturePool,
  createFlagServices,
} from '@hogbase/capture-server';

export const FLAGS_PROJECT_TOKEN = 'phc_flags_test_token';
export const FLAGS_PERSONAL_API_KEY = 'phx_flags_test_personal_key_0123456789abcdef';
export const FLAGS_ORGANIZATION_ID = '00000000-0000-4000-8000-0000000000f1';

export interface FlagsTestApp {
  baseUrl: string;
  teamId: number;
  /** The capture app's own pool: what a test inserts is what the flag endpoints read. */
  pool: Pool;
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * The capture app serving the SDK flag endpoints over HTTP on a random port, on a migrated
 * database holding one organization, its member with a personal API key (scope `*`), and one
 * project. Definitions are read again on every request (`ttlMs: 0`), so flags a test inserts are
 * served at once. The in-process bus takes whatever events an SDK sends and drops them.
 */
export async function startFlagsTestApp(groupTypes: readonly string[] = []): Promise<FlagsTestApp> {
  const database: TestDatabase = await createTestDatabase();
  const dataSource = await openDataSource({ url: database.url });
  let teamId: number;
  try {
    await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Flags', 'flags')`, [
      FLAGS_ORGANIZATION_ID,
    ]);
    [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Flags', $3) RETURNING id`,
      [randomUUID(), FLAGS_ORGANIZATION_ID, FLAGS_PROJECT_TOKEN],
    );
    const [{ id: userId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO users (uuid, distinct_id, email) VALUES ($1, $2, 'owner@flags.test') RETURNING id`,
      [randomUUID(), randomUUID()],
    );
    await dataSource.query(
      `INSERT INTO organization_memberships (id, organization_id, user_id, level) VALUES ($1, $2, $3, 15)`,
      [randomUUID(), FLAGS_ORGANIZATION_ID, userId],
    );
    // Stored as the management API stores it: only the key's SHA-256.
    const secureValue = `sha256$${createHash('sha256').update(FLAGS_PERSONAL_API_KEY).digest('hex')}`;
    await dataSource.query(
      `INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes)
       VALUES ($1, $2, 'flags test', $3, 'phx_...cdef', ARRAY['*'])`,
      [randomUUID().slice(0, 20), userId, secureValue],
    );
    for (const [index, groupType] of groupTypes.entries()) {
      await dataSource.query(
        `INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, $3)`,
        [teamId, groupType, index],
      );
    }
  } finally {
    await dataSource.destroy();
  }

  const bus = new InProcessBus();
  await bus.start(() => Promise.resolve());
  const logger = pino({ level: 'silent' });
  const pool = createCapturePool(database.url, logger, 8);
  const { app } = buildCaptureApp({
    publisher: bus,
    tokens: new ProjectTokenCache(pool),
    logger,
    batchBodyLimit: 20 * 1024 * 1024,
    eventBodyLimit: 2 * 1024 * 1024,
    maxDecodedBytes: 100 * 1024 * 1024,
    trustProxy: false,
    ready: () => Promise.resolve(true),
    flags: createFlagServices(pool, { ttlMs: 0 }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    teamId,
    pool,
    app,
    async close() {
      await app.close();
      await bus.stop();
      await pool.end();
      await database.drop();
    },
  };
}
