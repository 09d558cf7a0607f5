import type { FastifyInstance, RouteOptions } from 'fastify';
import type { OpenAPIV3 } from 'openapi-types';
import { Pool } from 'pg';
import pino from 'pino';
import { InProcessBus } from '@hogbase/queue';
import { buildCaptureApp } from '../capture.app';
import { createFlagServices } from '../flags/flag-services.util';
import { CAPTURE_API_COMPONENTS, CAPTURE_OPENAPI_PATH } from './capture-openapi.controller';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Fastify's `/array/:token/config` as the document writes it: `/array/{token}/config`. */
const documentPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');
/** Trailing slashes are optional on the capture host (`ignoreTrailingSlash`). */
const samePath = (path: string) => path.replace(/\/$/, '');

interface Operation {
  path: string;
  method: string;
  operation: OpenAPIV3.OperationObject;
}

function operationsOf(document: OpenAPIV3.Document): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = item?.[method];
      return operation ? [{ path, method: method.toUpperCase(), operation }] : [];
    }),
  );
}

function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') found.push(child);
      else refsIn(child, found);
    }
  }
  return found;
}

/**
 * The capture host with every optional part (flags, site apps, remote config): no request reaches
 * a store or the queue here, so the stores are stubs, the bus is not started and the pool never
 * connects.
 */
function buildFullCaptureApp(pool: Pool): FastifyInstance {
  return buildCaptureApp({
    publisher: new InProcessBus(),
    tokens: { resolve: () => Promise.resolve(null) },
    logger: pino({ level: 'silent' }),
    batchBodyLimit: 20_000_000,
    eventBodyLimit: 1_000_000,
    maxDecodedBytes: 20_000_000,
    trustProxy: false,
    ready: () => Promise.resolve(true),
    flags: createFlagServices(pool),
    siteApps: {
      forTeam: () => Promise.resolve([]),
      find: () => Promise.resolve(null),
      forget: () => undefined,
    },
    remoteConfig: { forTeam: () => Promise.resolve(null), forget: () => undefined },
  }).app;
}

describe('the capture host OpenAPI document', () => {
  const pool = new Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/never_connected_test' });
  let app: FastifyInstance;
  const routes: RouteOptions[] = [];
  let document: OpenAPIV3.Document;

  beforeAll(async () => {
    app = buildFullCaptureApp(pool);
    // Routes are added from plugins, at ready: this hook sees every one.
    app.addHook('onRoute', (route) => {
      routes.push(route);
    });
    await app.ready();
    document = app.swagger() as OpenAPIV3.Document;
  });

  afterAll(async () => {
    await app.close();
    await pool.end();
  });

  it('documents every route the app serves, and nothing it does not serve', () => {
    const documented = new Set(
      operationsOf(document).map(({ path, method }) => `${method} ${samePath(path)}`),
    );
    const served = new Set<string>();
    const undocumented: string[] = [];
    for (const route of routes) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const path = samePath(documentPath(route.url));
      if (route.config?.refusesMethod) {
        // The 405 of the methods a documented path does not list: none of them is documented.
        expect([path, methods.filter((method) => documented.has(`${method} ${path}`))]).toEqual([path, []]);
        expect([path, operationsOf(document).some((entry) => samePath(entry.path) === path)]).toEqual([
          path,
          true,
        ]);
        continue;
      }
      for (const method of methods) {
        // Fastify answers HEAD beside each GET: the GET documents it.
        const key = method === 'HEAD' ? `GET ${path}` : `${method} ${path}`;
        if (!documented.has(key)) undocumented.push(`${method} ${route.url}`);
        served.add(key);
      }
    }
    expect(undocumented).toEqual([]);
    expect([...documented].filter((key) => !served.has(key))).toEqual([]);
    expect(documented.size).toBeGreaterThanOrEqual(38);
  });

  it('names each operation by the route that serves it, and no route carries a Fastify schema', () => {
    const operationIds = new Map(
      operationsOf(document).map(({ path, method, operation }) => [
        `${method} ${samePath(path)}`,
        operation.operationId,
      ]),
    );
    for (const route of routes.filter((entry) => !entry.config?.refusesMethod && entry.method !== 'HEAD')) {
      const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
      expect([method, route.url, operationIds.get(`${method} ${samePath(documentPath(route.url))}`)]).toEqual(
        [method, route.url, route.config?.openapi?.operationId],
      );
    }
    // NOTE: a `schema` would make Fastify validate requests and serialize answers through it: a cost
    // on every event, and a filter that could drop fields SDKs need (free-form flag payloads).
    expect(routes.filter((route) => route.schema !== undefined).map((route) => route.url)).toEqual([]);
  });

  it('gives every operation a unique operationId, a tag, a summary and a 2xx answer with a schema', () => {
    const operations = operationsOf(document);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    for (const { path, method, operation } of operations) {
      const label = `${method} ${path}`;
      expect([label, typeof operation.operationId, operation.tags?.length, typeof operation.summary]).toEqual(
        [label, 'string', 1, 'string'],
      );
      const success = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status));
      const withSchema = success.filter(([, response]) =>
        Object.values((response as OpenAPIV3.ResponseObject).content ?? {}).some((media) => media.schema),
      );
      expect([label, withSchema.length > 0]).toEqual([label, true]);
      for (const [status, response] of Object.entries(operation.responses)) {
        expect([label, status, (response as OpenAPIV3.ResponseObject).description.length > 0]).toEqual([
          label,
          status,
          true,
        ]);
      }
    }
  });

  it('documents the statuses of the capture paths: 400, 401, 413, 415 and 503 in the error shape', () => {
    for (const path of ['/capture/', '/batch/', '/e/', '/i/v0/e/', '/flags/']) {
      const responses = document.paths[path]?.post?.responses ?? {};
      expect([path, Object.keys(responses).sort()]).toEqual([
        path,
        expect.arrayContaining(['200', '400', '401', '413', '415', '503']),
      ]);
      for (const status of ['400', '401', '413', '415', '503']) {
        const response = responses[status] as OpenAPIV3.ResponseObject;
        expect([path, status, response.content?.['application/json']?.schema]).toEqual([
          path,
          status,
          { $ref: '#/components/schemas/CaptureError' },
        ]);
      }
    }
    expect(Object.keys(document.paths['/capture/'] ?? {}).sort()).toEqual(['options', 'post']);
    expect(Object.keys(document.paths['/e/'] ?? {}).sort()).toEqual(['get', 'options', 'post']);
  });

  it('resolves every $ref to a component, and every component is used', () => {
    const components = document.components?.schemas ?? {};
    const refs = new Set(refsIn(document.paths).concat(refsIn(components)));
    expect([...refs].filter((ref) => !(ref.replace('#/components/schemas/', '') in components))).toEqual([]);
    expect(Object.keys(components).sort()).toEqual(
      CAPTURE_API_COMPONENTS.map((component) => component.$id ?? '').sort(),
    );
    expect(Object.keys(components).filter((name) => !refs.has(`#/components/schemas/${name}`))).toEqual([]);
  });

  it('declares the security schemes its operations name', () => {
    const schemes = Object.keys(document.components?.securitySchemes ?? {});
    const named = operationsOf(document).flatMap(({ operation }) =>
      (operation.security ?? []).flatMap((requirement) => Object.keys(requirement)),
    );
    expect([...new Set(named)].filter((name) => !schemes.includes(name))).toEqual([]);
    expect(document.paths['/flags/definitions']?.get?.security).toEqual([
      { PersonalAPIKey: [] },
      { ProjectSecretAPIKey: [] },
    ]);
  });

  it('serves the document it builds at /api/schema/, public and cached with an ETag', async () => {
    const answer = await app.inject({ method: 'GET', url: CAPTURE_OPENAPI_PATH });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('public, max-age=300');
    expect(answer.json()).toEqual(JSON.parse(JSON.stringify(document)));
    const again = await app.inject({
      method: 'GET',
      url: '/api/schema',
      headers: { 'if-none-match': String(answer.headers.etag) },
    });
    expect([again.statusCode, again.body]).toEqual([304, '']);
  });

  it("answers 405 with Allow to a method a documented path does not list, in the capture host's error shape", async () => {
    for (const [method, url, allow] of [
      ['DELETE', '/flags/', 'GET, POST'],
      ['PUT', '/array/phc_x/config', 'GET'],
      ['POST', '/flags/definitions', 'GET'],
      ['OPTIONS', '/_ready', 'GET'],
      ['PATCH', '/api/schema/', 'GET'],
      // Refused before Fastify reads the body: a QUERY must otherwise carry a Content-Type.
      ['QUERY', '/flags/definitions', 'GET'],
    ] as const) {
      const answer = await app.inject({ method, url });
      expect([method, url, answer.statusCode, answer.headers.allow]).toEqual([method, url, 405, allow]);
      expect(answer.json()).toEqual({
        type: 'invalid_request',
        code: 'method_not_allowed',
        detail: `Method "${method}" not allowed.`,
        attr: null,
      });
    }
    const unknown = await app.inject({ method: 'GET', url: '/nope' });
    expect([unknown.statusCode, unknown.json<{ code: string }>().code]).toEqual([404, 'not_found']);
  });

  it("answers a URL that is not valid percent-encoding 400 in the capture host's error shape", async () => {
    const answer = await app.inject({ method: 'GET', url: '/array/%E0%A4%A/config' });
    expect([answer.statusCode, answer.json<{ type: string; code: string }>()]).toEqual([
      400,
      expect.objectContaining({ type: 'invalid_request', code: 'invalid_url', attr: null }),
    ]);
  });
});
