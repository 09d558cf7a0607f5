import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import pino from 'pino';
import { testClickHouseDataPath } from '@hogbase/clickhouse/testing';
import { loadManagementConfig, type ManagementConfig } from '@hogbase/config';
import { BootstrapService, createManagementApp } from '@hogbase/management-api';
import { createTestDatabase, eventually, freePort, type TestDatabase } from '@hogbase/test-support';
import { apiClient, type ApiClient, type ApiResponse } from './management-test-app';

const CONCURRENT_REQUESTS = 30;
const UNAVAILABLE_BODY = {
  type: 'server_error',
  code: 'service_unavailable',
  detail: 'Transient error, please retry.',
  attr: null,
};
const OUTAGE_LINE = 'Postgres unavailable: requests that need it are answered 503 until it answers again';
const RECOVERY_LINE = 'Postgres answers again';

/**
 * A TCP proxy in front of the test server, on a fixed port: `stop()` stops listening and cuts what
 * it carries (Postgres is down: connections are refused), `start()` listens again.
 */
class PostgresProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly target: URL,
    readonly port: number,
  ) {}

  static async start(targetUrl: string): Promise<PostgresProxy> {
    const proxy = new PostgresProxy(new URL(targetUrl), await freePort());
    await proxy.start();
    return proxy;
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => this.sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** `url` with this proxy's address. */
  via(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    return proxied.toString();
  }
}

/**
 * Management when Postgres is out of connections or down (issue 28, defect 5): every request that
 * needs it is a 503 with Retry-After and the API's error body, never a 500; /_ready says not ready;
 * the outage is logged once when it starts and once when it ends, not a line with a stack per
 * request; and it serves again by itself once Postgres does.
 *
 * The app logs in as a role of its own (connection limits do not apply to a superuser), through a
 * proxy that can play a Postgres that is down.
 */
describe('management while Postgres is out of connections or down', () => {
  let database: TestDatabase;
  let admin: Client;
  let proxy: PostgresProxy;
  let app: INestApplication | undefined;
  let api: ApiClient;
  let anonymous: ApiClient;
  let projectId: number;
  /** The app's role, straight to the server. */
  let roleUrl: string;
  const role = {
    name: `hogbase_test_mgmt_${randomBytes(4).toString('hex')}`,
    password: randomBytes(8).toString('hex'),
  };
  /** Every line the app logged, parsed. */
  const lines: { level: number; msg?: string; [key: string]: unknown }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role.name} LOGIN PASSWORD '${role.password}'`);
    // Its owner migrates it (PostgreSQL 15: the owner may create in the public schema).
    await admin.query(`ALTER DATABASE ${database.name} OWNER TO ${role.name}`);
    const url = new URL(database.url);
    url.username = role.name;
    url.password = role.password;
    roleUrl = url.toString();
    proxy = await PostgresProxy.start(roleUrl);

    const port = await freePort();
    const config: ManagementConfig = {
      ...loadManagementConfig({ LOG_LEVEL: 'info', DATA_DIR: '/tmp/hogbase-test-unused' }),
      encryptionKeys: [randomBytes(32)],
      siteUrl: `http://127.0.0.1:${port}`,
    };
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
    );
    app = await createManagementApp({
      config,
      databaseUrl: proxy.via(roleUrl),
      clickhouse: { database: 'test_events_unused', dataPath: testClickHouseDataPath() },
      logger,
    });
    await app.listen(port, '127.0.0.1');
    const credentials = await app
      .get(BootstrapService)
      .bootstrap({ email: 'outage@example.test', organizationName: 'Outage' });
    projectId = credentials.project_id;
    const baseUrl = `http://127.0.0.1:${port}`;
    api = apiClient(baseUrl, `Bearer ${credentials.personal_api_key}`);
    anonymous = apiClient(baseUrl);
  });

  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
    await database?.drop();
    await admin?.query(`DROP ROLE IF EXISTS ${role.name}`).catch(() => undefined);
    await admin?.end();
  });

  /** 30 requests at once, reads and writes, as the experiment sent them. */
  function concurrentRequests(): Promise<ApiResponse[]> {
    return Promise.all(
      Array.from({ length: CONCURRENT_REQUESTS }, (_, index) =>
        index % 3 === 2
          ? api.post(`/api/projects/${projectId}/feature_flags/`, { key: `flag-${index}`, name: 'x' })
          : api.get(index % 3 === 0 ? `/api/projects/${projectId}/` : '/api/organizations/'),
      ),
    );
  }

  function expectUnavailable(responses: ApiResponse[]): void {
    const answers = responses.map((response) => ({
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: response.body as unknown,
    }));
    expect(answers).toEqual(
      Array.from({ length: CONCURRENT_REQUESTS }, () => ({
        status: 503,
        retryAfter: '5',
        body: UNAVAILABLE_BODY,
      })),
    );
  }

  /** What the app logged while `work` ran: the lines, and those that carry a stack. */
  async function logged(work: () => Promise<void>): Promise<{ warnings: string[]; withStack: unknown[] }> {
    const from = lines.length;
    await work();
    const during = lines.slice(from);
    return {
      warnings: during.filter((line) => line.level >= 40).map((line) => line.msg ?? ''),
      withStack: during.filter((line) => JSON.stringify(line).includes('"stack"')),
    };
  }

  async function expectServingAgain(): Promise<void> {
    await eventually('/_ready to answer 200', async () => (await anonymous.get('/_ready')).status === 200, {
      timeoutMs: 60_000,
    });
    expect((await api.get(`/api/projects/${projectId}/`)).status).toBe(200);
  }

  it('answers 503 with Retry-After when every connection of its role is held, and serves again once they are free', async () => {
    expect((await api.get(`/api/projects/${projectId}/`)).status).toBe(200);
    const holders: Client[] = [];
    const { warnings, withStack } = await logged(async () => {
      // Exhaustion: the role may hold 3 connections, others hold them, and the app's are gone.
      await admin.query(`ALTER ROLE ${role.name} CONNECTION LIMIT 3`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [
        role.name,
      ]);
      for (let index = 0; index < 3; index++) {
        const holder = new Client({ connectionString: roleUrl });
        holder.on('error', () => undefined);
        await holder.connect();
        holders.push(holder);
      }
      try {
        expectUnavailable(await concurrentRequests());
        expectUnavailable(await concurrentRequests());
        const ready = await anonymous.get('/_ready');
        expect(ready.status).toBe(503);
        expect(ready.body.checks.postgres).toMatch(/too many connections/);
      } finally {
        await admin.query(`ALTER ROLE ${role.name} CONNECTION LIMIT -1`);
        for (const holder of holders) await holder.end();
      }
      await expectServingAgain();
    });
    expect(warnings).toEqual([OUTAGE_LINE]);
    expect(withStack).toEqual([]);
    expect(lines.filter((line) => line.msg === RECOVERY_LINE)).toHaveLength(1);
  });

  it('answers 503 with Retry-After while Postgres refuses connections, and serves again once it is back', async () => {
    const { warnings, withStack } = await logged(async () => {
      await proxy.stop();
      try {
        expectUnavailable(await concurrentRequests());
        expectUnavailable(await concurrentRequests());
        const ready = await anonymous.get('/_ready');
        expect(ready.status).toBe(503);
        expect(ready.body).toMatchObject({
          code: 'service_unavailable',
          checks: { postgres: expect.any(String) },
        });
      } finally {
        await proxy.start();
      }
      await expectServingAgain();
    });
    expect(warnings).toEqual([OUTAGE_LINE]);
    expect(withStack).toEqual([]);
    expect(lines.filter((line) => line.msg === RECOVERY_LINE)).toHaveLength(2);
  });
});
