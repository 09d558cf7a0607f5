import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import pino from 'pino';
import { DataSource } from 'typeorm';
import type { ClickHouseConnectionConfig } from '@hogbase/clickhouse';
import { testClickHouseDataPath } from '@hogbase/clickhouse/testing';
import { loadManagementConfig, ManagementConfig } from '@hogbase/config';
import { BootstrapService, createManagementApp } from '@hogbase/management-api';
import { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import {
  createTestDatabase,
  registerOpenApiDocumentFrom,
  registerOpenApiDocumentOnce,
  TestDatabase,
  unregisterOpenApiDocument,
} from '@hogbase/test-support';
import { v7 as uuidv7 } from 'uuid';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON, or null when empty. */
  body: T;
}

export interface ApiClient {
  get<T = any>(path: string): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  delete<T = any>(path: string): Promise<ApiResponse<T>>;
  request<T = any>(
    method: string,
    path: string,
    init?: { body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
}

/**
 * Follows a listing's `next` links from `first` to the end, each page answered 200, and returns
 * every page's `results` in order with the number of pages; more than `maxPages` fails the test.
 */
export async function followPages<T>(
  api: ApiClient,
  first: string,
  maxPages: number,
): Promise<{ results: T[]; pages: number }> {
  const results: T[] = [];
  let url: string | null = first;
  let pages = 0;
  while (url) {
    const response: ApiResponse<{ results: T[]; next: string | null }> = await api.get(url);
    expect(response.status).toBe(200);
    results.push(...response.body.results);
    const next = response.body.next ? new URL(response.body.next) : null;
    url = next ? next.pathname + next.search : null;
    pages += 1;
    expect(pages).toBeLessThanOrEqual(maxPages);
  }
  return { results, pages };
}

export interface TestUser {
  user: User;
  /** A personal API key with scope `*`. */
  key: string;
  api: ApiClient;
}

export interface ManagementTestApp {
  app: INestApplication;
  baseUrl: string;
  dataSource: DataSource;
  bootstrap: BootstrapService;
  /** A client with the given Authorization header value (or none). */
  client(authorization?: string): ApiClient;
  /** A user with a `*` key, owner of a new organization (with its default project). */
  createOwner(
    email: string,
    organizationName?: string,
  ): Promise<TestUser & { organizationId: string; projectId: number; projectApiKey: string }>;
  /** A user with a `*` key who joins `organizationId` at `level`. */
  createMember(email: string, organizationId: string, level: MembershipLevel): Promise<TestUser>;
  createKey(
    email: string,
    scopes: string[],
    options?: { organizations?: string[]; projects?: number[] },
  ): Promise<string>;
  close(): Promise<void>;
}

export function apiClient(baseUrl: string, authorization?: string): ApiClient {
  const request = async <T>(
    method: string,
    path: string,
    init: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> => {
    // Suites that start the app themselves (on the embedded Postgres, behind a proxy) are checked
    // too: the client registers the document of the server it talks to (openapi-response-check.setup.ts).
    await registerOpenApiDocumentOnce(baseUrl);
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (authorization !== undefined) headers.Authorization = authorization;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['Content-Type'] ??= 'application/json';
    } else if (body !== undefined) {
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  };
  return {
    request,
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, { body }),
    patch: (path, body) => request('PATCH', path, { body }),
    delete: (path) => request('DELETE', path),
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The management app on a fresh Postgres database of its own, listening on a random loopback port:
 * tests talk to it over HTTP exactly as a client does.
 */
export async function startManagementTestApp(
  overrides: Partial<ManagementConfig> = {},
  options: { clickhouse?: ClickHouseConnectionConfig; logger?: pino.Logger } = {},
): Promise<ManagementTestApp> {
  const database: TestDatabase = await createTestDatabase();
  // The port is chosen first so that SITE_URL, the origin of absolute links, names this server.
  const port = await freeLoopbackPort();
  const config: ManagementConfig = {
    ...loadManagementConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/tmp/hogbase-test-unused' }),
    // A key of the test's own: nothing is written under DATA_DIR.
    encryptionKeys: [randomBytes(32)],
    siteUrl: `http://127.0.0.1:${port}`,
    // App archives in these tests are served on loopback; the app's own port stays refused.
    egress: { allowedPrivateNetworks: ['127.0.0.0/8'], ownPorts: [port] },
    ...overrides,
  };
  let app: INestApplication;
  try {
    app = await createManagementApp({
      config,
      databaseUrl: database.url,
      // Tests that list events pass a migrated test database (createTestClickHouse); the others
      // never reach the store, which opens on first use.
      clickhouse: options.clickhouse ?? {
        database: 'test_events_unused',
        dataPath: testClickHouseDataPath(),
      },
      logger: options.logger ?? pino({ level: 'silent' }),
    });
    await app.listen(port, '127.0.0.1');
  } catch (error) {
    await database.drop();
    throw error;
  }
  const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  // Every answer the suite receives from this app is checked against the document it serves
  // (libs/test-support/src/openapi-response-check.setup.ts).
  await registerOpenApiDocumentFrom(baseUrl);
  const dataSource = app.get(DataSource);
  const bootstrap = app.get(BootstrapService);

  const createKey: ManagementTestApp['createKey'] = (email, scopes, options = {}) =>
    bootstrap.createPersonalApiKey({
      email,
      scopes,
      scopedOrganizations: options.organizations,
      scopedTeams: options.projects,
    });

  return {
    app,
    baseUrl,
    dataSource,
    bootstrap,
    client: (authorization) => apiClient(baseUrl, authorization),
    createKey,
    async createOwner(email, organizationName = `Organization of ${email}`) {
      const credentials = await bootstrap.bootstrap({ email, organizationName });
      const user = await dataSource.getRepository(User).findOneByOrFail({ email });
      return {
        user,
        key: credentials.personal_api_key,
        api: apiClient(baseUrl, `Bearer ${credentials.personal_api_key}`),
        organizationId: credentials.organization_id,
        projectId: credentials.project_id,
        projectApiKey: credentials.project_api_key,
      };
    },
    async createMember(email, organizationId, level) {
      const user = await bootstrap.findOrCreateUser(email);
      await dataSource
        .getRepository(OrganizationMembership)
        .insert({ id: uuidv7(), organizationId, userId: user.id, level });
      if (!user.currentOrganizationId) {
        await dataSource
          .getRepository(User)
          .update({ id: user.id }, { currentOrganizationId: organizationId });
        user.currentOrganizationId = organizationId;
      }
      const key = await createKey(email, ['*']);
      return { user, key, api: apiClient(baseUrl, `Bearer ${key}`) };
    },
    async close() {
      unregisterOpenApiDocument(baseUrl);
      await app.close();
      await database.drop();
    },
  };
}
