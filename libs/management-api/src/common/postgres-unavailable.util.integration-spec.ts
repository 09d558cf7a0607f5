import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  guardDataSource,
  postgresDataSourceOptions,
  POSTGRES_TIMEOUTS,
  type PostgresTimeouts,
} from '@hogbase/postgres';
import { createTestDatabase, freePort, type TestDatabase } from '@hogbase/test-support';
import { isPostgresUnavailable } from './postgres-unavailable.util';

/**
 * The failures management meets when Postgres is out of connections, refuses them, goes away or
 * does not answer, provoked on a real server through the data source management uses (TypeORM over
 * pg, guarded and bounded as openDataSource does): each must be classified unavailable (503), and
 * the failures of a statement on a healthy server must not.
 */
describe('isPostgresUnavailable on what a real Postgres and pg produce', () => {
  let database: TestDatabase;
  let admin: Client;
  const dataSources: DataSource[] = [];
  const roles: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    // On the server's own database: ALTER DATABASE … ALLOW_CONNECTIONS is refused from inside it.
    admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
  });

  afterEach(async () => {
    for (const dataSource of dataSources.splice(0)) {
      if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    }
  });

  afterAll(async () => {
    await database?.drop();
    // Roles belong to the server: dropped once the database (and its sessions) is gone.
    try {
      for (const role of roles) await admin.query(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await admin?.end();
    }
  });

  /** A data source as management opens it (without the migrations), not yet initialized. */
  function dataSource(url: string, poolSize = 4, overrides: Partial<PostgresTimeouts> = {}): DataSource {
    const timeouts = { ...POSTGRES_TIMEOUTS, ...overrides };
    const source = new DataSource(postgresDataSourceOptions({ url, poolSize, timeouts }));
    guardDataSource(source, {
      queryTimeoutMs: timeouts.queryTimeoutMs,
      idleInTransactionTimeoutMs: timeouts.idleInTransactionTimeoutMs,
    });
    dataSources.push(source);
    return source;
  }

  async function failureOf(work: Promise<unknown>): Promise<Error & Record<string, unknown>> {
    try {
      await work;
    } catch (error) {
      return error as Error & Record<string, unknown>;
    }
    throw new Error('expected a failure');
  }

  /** A login role of the test (not a superuser, so connection limits apply to it). */
  async function loginRole(connectionLimit: number): Promise<{ name: string; url: string }> {
    const name = `hogbase_test_role_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(8).toString('hex');
    await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}' CONNECTION LIMIT ${connectionLimit}`);
    roles.push(name);
    const url = new URL(database.url);
    url.username = name;
    url.password = password;
    return { name, url: url.toString() };
  }

  async function waitForStatement(text: string): Promise<void> {
    for (;;) {
      const { rows } = await admin.query<{ count: string }>(
        `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query = $2`,
        [database.name, text],
      );
      if (Number(rows[0].count) > 0) return;
      await sleep(20);
    }
  }

  it('classifies a role over its connection limit (53300 too_many_connections)', async () => {
    const role = await loginRole(1);
    const source = dataSource(role.url);
    await source.initialize();
    // The role's one connection is taken: the next query needs another one.
    const holder = source.createQueryRunner();
    await holder.connect();
    try {
      const failure = await failureOf(source.query('SELECT 1'));
      expect(failure).toMatchObject({ code: '53300', severity: 'FATAL' });
      expect(isPostgresUnavailable(failure)).toBe(true);
    } finally {
      await holder.release();
    }
  });

  it('classifies a role that may no longer log in (28000, FATAL)', async () => {
    const role = await loginRole(-1);
    await admin.query(`ALTER ROLE ${role.name} NOLOGIN`);
    const failure = await failureOf(dataSource(role.url).initialize());
    expect(failure).toMatchObject({ code: '28000', severity: 'FATAL' });
    expect(isPostgresUnavailable(failure)).toBe(true);
  });

  it('classifies a database that does not accept connections (55000, FATAL)', async () => {
    await admin.query(`ALTER DATABASE ${database.name} WITH ALLOW_CONNECTIONS false`);
    try {
      const failure = await failureOf(dataSource(database.url).initialize());
      expect(failure).toMatchObject({ code: '55000', severity: 'FATAL' });
      expect(isPostgresUnavailable(failure)).toBe(true);
    } finally {
      await admin.query(`ALTER DATABASE ${database.name} WITH ALLOW_CONNECTIONS true`);
    }
  });

  it('classifies a statement whose session is terminated (57P01 admin_shutdown)', async () => {
    const source = dataSource(database.url);
    await source.initialize();
    const statement = 'SELECT pg_sleep(30) AS terminated_here';
    const running = failureOf(source.query(statement));
    await waitForStatement(statement);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, [statement]);
    const failure = await running;
    expect(failure).toMatchObject({ name: 'QueryFailedError', code: '57P01' });
    expect(isPostgresUnavailable(failure)).toBe(true);
  });

  it('classifies a statement whose connection is cut (Connection terminated unexpectedly)', async () => {
    const proxy = await startProxy(database.url);
    try {
      const source = dataSource(proxy.url);
      await source.initialize();
      const statement = 'SELECT pg_sleep(30) AS cut_here';
      const running = failureOf(source.query(statement));
      await waitForStatement(statement);
      proxy.cut();
      const failure = await running;
      expect(failure.name).toBe('QueryFailedError');
      expect((failure.driverError as Error).message).toBe('Connection terminated unexpectedly');
      expect(isPostgresUnavailable(failure)).toBe(true);
    } finally {
      await proxy.close();
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()`,
        ['SELECT pg_sleep(30) AS cut_here'],
      );
    }
  });

  it('classifies every failure of queries after Postgres went away, refused connections (ECONNREFUSED) among them', async () => {
    const proxy = await startProxy(database.url);
    const source = dataSource(proxy.url);
    await source.initialize();
    await proxy.close();
    const failures: (Error & Record<string, unknown>)[] = [];
    for (let attempt = 0; attempt < 5; attempt++) failures.push(await failureOf(source.query('SELECT 1')));
    expect(failures.filter((failure) => !isPostgresUnavailable(failure))).toEqual([]);
    expect(failures.map((failure) => failure.code)).toContain('ECONNREFUSED');
  });

  it('classifies a Unix socket that is not there (connect ENOENT)', async () => {
    const url = `postgres://nobody@localhost/nothing?host=/nonexistent-${randomBytes(4).toString('hex')}`;
    const failure = await failureOf(dataSource(url).initialize());
    expect(failure).toMatchObject({ code: 'ENOENT', syscall: 'connect' });
    expect(isPostgresUnavailable(failure)).toBe(true);
  });

  it('classifies a server that accepts and never answers (connection timeout)', async () => {
    const silent = createServer(() => undefined);
    const sockets = new Set<Socket>();
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const source = dataSource(`postgres://nobody@127.0.0.1:${port}/nothing`, 1, {
        connectionTimeoutMs: 300,
      });
      const failure = await failureOf(source.initialize());
      expect(failure.message).toBe('Connection terminated due to connection timeout');
      expect(isPostgresUnavailable(failure)).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('classifies a pool with no free connection within connectionTimeoutMillis', async () => {
    const source = dataSource(database.url, 1, { connectionTimeoutMs: 300 });
    await source.initialize();
    const holder = source.createQueryRunner();
    await holder.connect();
    try {
      const failure = await failureOf(source.query('SELECT 1'));
      expect(failure.message).toBe('timeout exceeded when trying to connect');
      expect(isPostgresUnavailable(failure)).toBe(true);
    } finally {
      await holder.release();
    }
  });

  it('classifies a query Postgres does not answer within the client-side bound', async () => {
    const source = dataSource(database.url, 2, { queryTimeoutMs: 300 });
    await source.initialize();
    const failure = await failureOf(source.query('SELECT pg_sleep(5)'));
    expect(failure.name).toBe('PostgresQueryTimeoutError');
    expect(isPostgresUnavailable(failure)).toBe(true);
  });

  it('does not classify failures of a statement on a healthy server', async () => {
    const source = dataSource(database.url, 2, { statementTimeoutMs: 100 });
    await source.initialize();
    await source.query('CREATE TABLE unique_things (name text PRIMARY KEY)');
    await source.query(`INSERT INTO unique_things VALUES ('one')`);
    const failures = [
      await failureOf(source.query(`INSERT INTO unique_things VALUES ('one')`)),
      await failureOf(source.query(`SELECT 'x'::int`)),
      await failureOf(source.query('SELEC 1')),
      await failureOf(source.query('SELECT * FROM no_such_table')),
      // statement_timeout: the server cancels a slow statement and the session lives on.
      await failureOf(source.query('SELECT pg_sleep(1)')),
    ];
    expect(failures.map((failure) => failure.code)).toEqual(['23505', '22P02', '42601', '42P01', '57014']);
    expect(failures.filter((failure) => isPostgresUnavailable(failure))).toEqual([]);
    expect(isPostgresUnavailable(new Error('boom'))).toBe(false);
  });
});

/**
 * A TCP proxy to the test server: `cut()` destroys the connections it carries (a network that
 * drops them), `close()` also stops listening (connections are then refused).
 */
async function startProxy(targetUrl: string): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: url.toString(),
    cut,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      cut();
      await closed;
    },
  };
}
