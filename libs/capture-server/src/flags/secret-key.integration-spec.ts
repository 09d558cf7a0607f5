import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import { FlagStore, pgSqlClient } from '@hogbase/flag-store';
import {
  generateProjectSecretApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
  openDataSource,
} from '@hogbase/postgres';
import { InProcessBus } from '@hogbase/queue';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { buildCaptureApp } from '../capture.app';
import { createCapturePool } from '../postgres-pool.util';
import { ProjectTokenCache } from '../project-token.cache';
import { FlagDefinitionsCache } from './flag-definitions.cache';
import { PersonalKeyAuthorizer } from './personal-key.guard';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';
const TOKENS = { web: 'phc_secret_keys_web', shop: 'phc_secret_keys_shop' };

const UNKNOWN_KEY = {
  type: 'authentication_error',
  code: 'authentication_failed',
  detail: 'Personal API key found in request Authorization header is invalid.',
  attr: null,
};
const NO_ACCESS = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'You do not have access to this project.',
  attr: null,
};

describe('project secret API keys on the local-evaluation endpoints', () => {
  let database: TestDatabase;
  let pool: Pool;
  let bus: InProcessBus;
  let app: FastifyInstance;
  let keys: PersonalKeyAuthorizer;
  let baseUrl: string;
  const teams = { web: 0, shop: 0 };
  const secrets = { web: '', shop: '' };
  let clock = 0;

  /** Stores a key as the management API does: its SHA-256 and mask only. */
  async function insertKey(teamId: number, label: string, scopes = ['feature_flag:read']): Promise<string> {
    const value = generateProjectSecretApiKey();
    await pool.query(
      `INSERT INTO project_secret_api_keys (id, team_id, label, secure_value, mask_value, scopes)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [generateRandomId(), teamId, label, hashPersonalApiKey(value), maskApiKey(value), scopes],
    );
    return value;
  }

  beforeEach(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Org', 'org')`, [
      ORGANIZATION,
    ]);
    for (const name of ['web', 'shop'] as const) {
      [{ id: teams[name] }] = await dataSource.query<{ id: number }[]>(
        `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, $3)
         RETURNING id`,
        [ORGANIZATION, name, TOKENS[name]],
      );
      await dataSource.query(
        `INSERT INTO feature_flags (team_id, key, name, filters, active) VALUES ($1, $2::text, $2::text, $3, true)`,
        [teams[name], `${name}-flag`, { groups: [{ properties: [], rollout_percentage: 100 }] }],
      );
    }
    await dataSource.destroy();

    clock = 1_000_000;
    const logger = pino({ level: 'silent' });
    pool = createCapturePool(database.url, logger, 4);
    bus = new InProcessBus();
    await bus.start(() => Promise.resolve());
    const store = new FlagStore(pgSqlClient(pool));
    keys = new PersonalKeyAuthorizer(pool, () => clock);
    ({ app } = buildCaptureApp({
      publisher: bus,
      tokens: new ProjectTokenCache(pool),
      logger,
      batchBodyLimit: 1024 * 1024,
      eventBodyLimit: 1024 * 1024,
      maxDecodedBytes: 10 * 1024 * 1024,
      trustProxy: false,
      ready: () => Promise.resolve(true),
      flags: { store, definitions: new FlagDefinitionsCache(store, { ttlMs: 0 }), keys },
    }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    secrets.web = await insertKey(teams.web, 'web backend');
    secrets.shop = await insertKey(teams.shop, 'shop backend');
  });

  afterEach(async () => {
    await app?.close();
    await bus?.stop();
    await pool?.end();
    await database?.drop();
  });

  async function definitions(
    token: string,
    key: string,
    { path = '/flags/definitions', headers = {} }: { path?: string; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; etag: string | null; body: any }> {
    const response = await fetch(`${baseUrl}${path}?token=${token}&send_cohorts`, {
      headers: { Authorization: `Bearer ${key}`, ...headers },
    });
    const text = await response.text();
    return {
      status: response.status,
      etag: response.headers.get('etag'),
      body: text ? JSON.parse(text) : null,
    };
  }

  const lastUsedAt = async (value: string): Promise<Date | null> =>
    (
      await pool.query<{ last_used_at: Date | null }>(
        'SELECT last_used_at FROM project_secret_api_keys WHERE secure_value = $1',
        [hashPersonalApiKey(value)],
      )
    ).rows[0].last_used_at;

  it("serves a project's definitions to its secret key, on both paths, and records the use", async () => {
    expect(await lastUsedAt(secrets.web)).toBeNull();
    for (const path of ['/flags/definitions', '/api/feature_flag/local_evaluation']) {
      const answer = await definitions(TOKENS.web, secrets.web, { path });
      expect(answer.status).toBe(200);
      expect(answer.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['web-flag']);
      expect(answer.body).toMatchObject({ group_type_mapping: {}, cohorts: {} });
    }
    expect(await lastUsedAt(secrets.web)).toEqual(expect.any(Date));
  });

  it('answers 304 to the ETag it gave a secret key, as to a personal key', async () => {
    const first = await definitions(TOKENS.web, secrets.web);
    expect(first.etag).toMatch(/^".+-c"$/);
    const again = await definitions(TOKENS.web, secrets.web, { headers: { 'If-None-Match': first.etag! } });
    expect([again.status, again.body]).toEqual([304, null]);
    const stale = await definitions(TOKENS.web, secrets.web, { headers: { 'If-None-Match': '"stale"' } });
    expect(stale.status).toBe(200);
  });

  it("refuses another project's secret key with 403, and an unknown one with 401", async () => {
    expect(await definitions(TOKENS.web, secrets.shop)).toMatchObject({ status: 403, body: NO_ACCESS });
    expect(await definitions(TOKENS.shop, secrets.web)).toMatchObject({ status: 403, body: NO_ACCESS });
    expect(await definitions(TOKENS.web, generateProjectSecretApiKey())).toMatchObject({
      status: 401,
      body: UNKNOWN_KEY,
    });
    // Refused keys leave no trace of use.
    expect(await lastUsedAt(secrets.shop)).toBeNull();
  });

  it('refuses a secret key whose scopes lack feature_flag:read', async () => {
    const key = await insertKey(teams.web, 'no flags', ['project:read']);
    expect(await definitions(TOKENS.web, key)).toMatchObject({
      status: 403,
      body: { code: 'permission_denied', detail: "API key missing required scope 'feature_flag:read'" },
    });
  });

  it('refuses a deleted key once its project is forgotten, or once the cached answer is 10 s old', async () => {
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    expect((await definitions(TOKENS.shop, secrets.shop)).status).toBe(200);
    await pool.query('DELETE FROM project_secret_api_keys');
    // Within the TTL the cached answer stands: what forgetTeam exists to cut short.
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    keys.forgetTeam(teams.web);
    expect(await definitions(TOKENS.web, secrets.web)).toMatchObject({ status: 401, body: UNKNOWN_KEY });

    // Without being told, the shop's answer lives out its TTL.
    clock += 9_000;
    expect((await definitions(TOKENS.shop, secrets.shop)).status).toBe(200);
    clock += 1_001;
    expect((await definitions(TOKENS.shop, secrets.shop)).status).toBe(401);
  });

  it("drops only the forgotten project's answers", async () => {
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    expect((await definitions(TOKENS.shop, secrets.shop)).status).toBe(200);
    await pool.query('DELETE FROM project_secret_api_keys');
    keys.forgetTeam(teams.shop);
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    expect((await definitions(TOKENS.shop, secrets.shop)).status).toBe(401);
    keys.forgetAll();
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(401);
  });

  it('refuses the old value of a rolled key and accepts the new one', async () => {
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    const rolled = generateProjectSecretApiKey();
    await pool.query(
      `UPDATE project_secret_api_keys SET secure_value = $1, mask_value = $2, last_rolled_at = now()
        WHERE secure_value = $3`,
      [hashPersonalApiKey(rolled), maskApiKey(rolled), hashPersonalApiKey(secrets.web)],
    );
    keys.forgetTeam(teams.web);
    expect(await definitions(TOKENS.web, secrets.web)).toMatchObject({ status: 401, body: UNKNOWN_KEY });
    expect((await definitions(TOKENS.web, rolled)).status).toBe(200);
  });

  it('writes last_used_at at most once an hour', async () => {
    const setLastUsed = (interval: string) =>
      pool.query(
        `UPDATE project_secret_api_keys SET last_used_at = now() - $1::interval WHERE secure_value = $2`,
        [interval, hashPersonalApiKey(secrets.web)],
      );
    await setLastUsed('30 minutes');
    const recent = await lastUsedAt(secrets.web);
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    expect(await lastUsedAt(secrets.web)).toEqual(recent);

    await setLastUsed('2 hours');
    const old = (await lastUsedAt(secrets.web))!;
    keys.forgetTeam(teams.web);
    expect((await definitions(TOKENS.web, secrets.web)).status).toBe(200);
    expect((await lastUsedAt(secrets.web))!.getTime()).toBeGreaterThan(old.getTime() + 60 * 60 * 1000);
  });

  describe('without ?token=', () => {
    async function definitionsWith(
      key: string,
      headers: Record<string, string> = {},
    ): Promise<{ status: number; body: any }> {
      const response = await fetch(`${baseUrl}/flags/definitions/?send_cohorts`, {
        headers: { Authorization: `Bearer ${key}`, ...headers },
      });
      return { status: response.status, body: await response.json() };
    }

    it('takes the project API key in X-PostHog-Project-Api-Key, and refuses the key of another project there', async () => {
      const own = await definitionsWith(secrets.web, { 'X-PostHog-Project-Api-Key': TOKENS.web });
      expect(own.status).toBe(200);
      expect(own.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['web-flag']);
      expect(await definitionsWith(secrets.shop, { 'X-PostHog-Project-Api-Key': TOKENS.web })).toMatchObject({
        status: 403,
        body: NO_ACCESS,
      });
    });

    it("serves a secret key its own project when the request names none, as PostHog's local_evaluation", async () => {
      const web = await definitionsWith(secrets.web);
      const shop = await definitionsWith(secrets.shop);
      expect([web.status, shop.status]).toEqual([200, 200]);
      expect(web.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['web-flag']);
      expect(shop.body.flags.map((flag: { key: string }) => flag.key)).toEqual(['shop-flag']);
      expect(await lastUsedAt(secrets.web)).toEqual(expect.any(Date));
    });

    it('refuses an unknown secret key naming no project with 401, and a key without the scope with 403', async () => {
      expect(await definitionsWith(generateProjectSecretApiKey())).toMatchObject({
        status: 401,
        body: UNKNOWN_KEY,
      });
      const unscoped = await insertKey(teams.web, 'no flags', ['project:read']);
      expect(await definitionsWith(unscoped)).toMatchObject({
        status: 403,
        body: { code: 'permission_denied' },
      });
    });
  });

  it('is no project token: capture and remote evaluation refuse a secret key in its place', async () => {
    const batch = await fetch(`${baseUrl}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: secrets.web, batch: [{ event: 'e', distinct_id: 'd' }] }),
    });
    const flags = await fetch(`${baseUrl}/flags?v=2`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${secrets.web}` },
      body: JSON.stringify({ token: secrets.web, distinct_id: 'd' }),
    });
    const asToken = await definitions(secrets.web, secrets.web);
    expect([batch.status, flags.status, asToken.status]).toEqual([401, 401, 401]);
    expect(await flags.json()).toMatchObject({ code: 'invalid_api_key' });
  });
});
