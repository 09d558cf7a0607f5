import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { startCaptureOnTestDatabase } from './capture-test-app';

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
  return startCaptureOnTestDatabase({
    project: {
      organizationId: FLAGS_ORGANIZATION_ID,
      organizationName: 'Flags',
      teamName: 'Flags',
      token: FLAGS_PROJECT_TOKEN,
    },
    seed: async (dataSource, teamId) => {
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
    },
    consume: () => Promise.resolve(),
    poolSize: 8,
    flags: true,
  });
}
