import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Client, type Pool } from 'pg';
import { openDataSource } from '@hogbase/postgres';
import { createTestDatabase, TestDatabase } from '@hogbase/test-support';
import { createCapturePool } from './postgres-pool.util';
import { TokenLookupUnavailableError } from './capture.errors';
import { ProjectTokenCache } from './project-token.cache';

describe('ProjectTokenCache', () => {
  let database: TestDatabase;
  let pool: Pool;
  let clock = 0;

  beforeEach(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.query(
      `INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-4000-8000-000000000001', 'Org', 'org')`,
    );
    await dataSource.query(
      `INSERT INTO teams (uuid, organization_id, name, api_token)
       VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'Web', 'phc_known')`,
    );
    await dataSource.destroy();
    pool = createCapturePool(database.url, { warn: () => undefined }, 2);
    clock = 1_000_000;
  });

  afterEach(async () => {
    await pool.end().catch(() => undefined);
    await database.drop();
  });

  const cache = (options = {}) => new ProjectTokenCache(pool, options, () => clock);

  it('resolves a project token to its project id and an unknown one to null', async () => {
    const tokens = cache();
    const [teamId] = (await pool.query<{ id: number }>('SELECT id FROM teams')).rows.map((row) => row.id);
    expect(await tokens.resolve('phc_known')).toBe(teamId);
    expect(await tokens.resolve('phc_unknown')).toBeNull();
  });

  it('answers null for a token no project can have, without asking Postgres (a NUL byte fails the query: an outage any client could fake)', async () => {
    const lines: string[] = [];
    const logger = { warn: (_fields: object, message?: string) => lines.push(message ?? ''), info: () => 0 };
    const tokens = cache({ logger });
    const query = jest.spyOn(pool, 'query');
    for (const token of ['phc_\u0000known', 'phx_a_personal_key', `phc_${'x'.repeat(61)}`]) {
      expect([token, await tokens.resolve(token)]).toEqual([token, null]);
    }
    expect(query).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(await tokens.resolve('phc_known')).toEqual(expect.any(Number));
  });

  it('sees a project created after a miss once the negative entry expired', async () => {
    const tokens = cache({ unknownTtlMs: 5_000 });
    expect(await tokens.resolve('phc_new')).toBeNull();
    await pool.query(`UPDATE teams SET api_token = 'phc_new'`);
    expect(await tokens.resolve('phc_new')).toBeNull();
    clock += 5_001;
    expect(await tokens.resolve('phc_new')).toEqual(expect.any(Number));
  });

  it('stops accepting a rotated token once the positive entry expired', async () => {
    const tokens = cache({ knownTtlMs: 60_000 });
    expect(await tokens.resolve('phc_known')).toEqual(expect.any(Number));
    await pool.query(`UPDATE teams SET api_token = 'phc_rotated'`);
    clock += 60_001;
    expect(await tokens.resolve('phc_known')).toBeNull();
  });

  it('keeps serving known tokens while Postgres is down, and refuses to guess about unknown ones', async () => {
    const tokens = cache({ knownTtlMs: 1 });
    const teamId = await tokens.resolve('phc_known');
    await database.drop();
    clock += 10;
    expect(await tokens.resolve('phc_known')).toBe(teamId);
    await expect(tokens.resolve('phc_never_seen')).rejects.toBeInstanceOf(TokenLookupUnavailableError);
  });

  it('while Postgres refuses connections, asks it again only every retryAfterFailureMs, and logs the outage once each way', async () => {
    const lines: string[] = [];
    const logger = {
      warn: (_fields: object, message?: string) => lines.push(`warn: ${message ?? ''}`),
      info: (message: string) => lines.push(`info: ${message}`),
    };
    const tokens = cache({ knownTtlMs: 60_000, retryAfterFailureMs: 5_000, logger });
    const teamId = await tokens.resolve('phc_known');
    const query = jest.spyOn(pool, 'query');
    const name = new URL(database.url).pathname.slice(1);
    const admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      clock += 60_001;
      for (let request = 0; request < 10; request++) {
        expect(await tokens.resolve('phc_known')).toBe(teamId);
        clock += 100;
      }
      expect(query).toHaveBeenCalledTimes(1);
      clock += 5_000;
      expect(await tokens.resolve('phc_known')).toBe(teamId);
      expect(query).toHaveBeenCalledTimes(2);

      await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
      clock += 5_001;
      expect(await tokens.resolve('phc_known')).toBe(teamId);
      expect(await tokens.resolve('phc_unknown')).toBeNull();
    } finally {
      await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
    }
    expect(lines).toEqual([
      'warn: project token lookups failing: known tokens are served from the cache, unknown ones get 503 until Postgres answers',
      'info: project token lookups answer again',
    ]);
  });

  it('is not ready until it has loaded the tokens once, and then resolves them while Postgres is down', async () => {
    const name = new URL(database.url).pathname.slice(1);
    const admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    const allowConnections = async (allow: boolean) => {
      await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS ${allow}`);
      if (!allow) {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
          name,
        ]);
      }
    };
    try {
      const [teamId] = (await pool.query<{ id: number }>('SELECT id FROM teams')).rows.map((row) => row.id);
      await allowConnections(false);
      const tokens = cache();
      expect(await tokens.readiness()).toMatch(/^no project token loaded yet, Postgres is unavailable: /);
      await allowConnections(true);
      expect(await tokens.readiness()).toBe(true);
      await allowConnections(false);
      // Never asked for before the outage: known from the load.
      expect(await tokens.resolve('phc_known')).toBe(teamId);
      expect(await tokens.readiness()).toBe(true);
    } finally {
      await allowConnections(true).catch(() => undefined);
      await admin.end();
    }
  });

  it('does not bring back a token reset while the answer of a load was on its way', async () => {
    const proxy = await startHoldingProxy(database.url);
    const slowPool = createCapturePool(proxy.url, { warn: () => undefined }, 1);
    try {
      const tokens = new ProjectTokenCache(slowPool, {}, () => clock);
      await slowPool.query('SELECT 1');
      // The load's answer, read before the reset, reaches capture only after it was told of the reset.
      const answered = proxy.holdAnswers();
      const loading = tokens.load();
      await answered;
      await pool.query(`UPDATE teams SET api_token = 'phc_reset'`);
      tokens.forget(null);
      proxy.releaseAnswers();
      await loading;
      expect(await tokens.resolve('phc_known')).toBeNull();
      expect(await tokens.resolve('phc_reset')).toEqual(expect.any(Number));
    } finally {
      await slowPool.end();
      await proxy.close();
    }
  });

  it('sends one query for concurrent lookups of one token', async () => {
    const tokens = cache();
    const query = jest.spyOn(pool, 'query');
    await Promise.all(Array.from({ length: 20 }, () => tokens.resolve('phc_known')));
    expect(query).toHaveBeenCalledTimes(1);
  });
});

/**
 * A TCP proxy to the test server that can hold what the server sends: holdAnswers() resolves once
 * an answer is held, releaseAnswers() delivers it.
 */
async function startHoldingProxy(targetUrl: string): Promise<{
  url: string;
  holdAnswers(): Promise<void>;
  releaseAnswers(): void;
  close(): Promise<void>;
}> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let held: { chunks: Buffer[]; client: Socket; onFirst: () => void } | undefined;
  let holding: (() => void) | undefined;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!holding) return void client.write(chunk);
      held ??= { chunks: [], client, onFirst: holding };
      held.chunks.push(chunk);
      held.onFirst();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    holdAnswers: () => new Promise<void>((resolve) => (holding = resolve)),
    releaseAnswers() {
      holding = undefined;
      if (held) for (const chunk of held.chunks) held.client.write(chunk);
      held = undefined;
    },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
