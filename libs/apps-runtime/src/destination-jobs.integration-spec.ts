import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { insertEnabledAppRows, insertProjectRows } from '@hogbase/test-support';
import {
  AppDestinations,
  type AppDestinationsOptions,
  type DestinationEvent,
} from './app-destinations.service';
import { MAX_JOB_BYTES } from './destination-jobs.util';

jest.setTimeout(60_000);

describe('destination jobs in the job engine', () => {
  let database: MigratedTestDatabase;
  let pool: Pool;
  let teamId: number;

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    const project = await insertProjectRows(pool, 'Jobs');
    teamId = project.teamId;
    await insertEnabledAppRows(pool, {
      organizationId: project.organizationId,
      teamId,
      code: 'exports.composeWebhook = () => null;',
      config: {},
      capabilities: { methods: ['composeWebhook'] },
    });
  });

  afterAll(async () => {
    await database?.close();
  });

  it('writes no job row larger than the byte budget, however many large events a batch hands off', async () => {
    // The jobs' delivery is not what this tests: no app instance runs them.
    const apps = {
      forTeam: () => Promise.resolve([]),
      forConfig: () => Promise.resolve(undefined),
    } as unknown as AppDestinationsOptions['apps'];
    const destinations = new AppDestinations({
      pool,
      connectionString: database.url,
      apps,
      log: {} as AppDestinationsOptions['log'],
      fetch: () => Promise.reject(new Error('no delivery in this test')),
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
    });
    destinations.start();
    try {
      const events: DestinationEvent[] = Array.from({ length: 40 }, (_, index) => ({
        uuid: randomUUID(),
        event: 'large',
        team_id: teamId,
        distinct_id: 'user',
        properties: { index, blob: 'x'.repeat(100_000) },
        timestamp: new Date().toISOString(),
        elements_chain: '',
        person: { uuid: randomUUID(), properties: {}, created_at: new Date().toISOString() },
      }));
      await destinations.handOff(events);

      const { rows } = await pool.query<{ bytes: number; events: number }>(
        `SELECT octet_length(data::text) AS bytes, jsonb_array_length(data -> 'events') AS events
         FROM pgboss.job WHERE name = 'app-destinations'`,
      );
      expect(rows.reduce((sum, row) => sum + row.events, 0)).toBe(40);
      expect(rows.length).toBeGreaterThanOrEqual(4);
      for (const row of rows) expect(row.bytes).toBeLessThanOrEqual(MAX_JOB_BYTES * 1.01);
    } finally {
      await destinations.stop();
    }
  });
});
