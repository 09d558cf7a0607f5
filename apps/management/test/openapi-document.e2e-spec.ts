import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ANSWERS_STATUSES, routeTable, type RouteEntry } from '@hogbase/management-api';
import { ManagementTestApp, startManagementTestApp } from './management-test-app';

interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: unknown;
  responses: Record<
    string,
    { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: Schema }> }
  >;
  'x-access'?: { scope: string };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * The management API's OpenAPI document, as /api/schema/ serves it, holds what a client generator
 * and Schemathesis rely on: every operation named once, every reference resolvable, every path
 * parameter and error answer described, a response schema for every success, pages with their
 * limit and offset, and closed response models.
 */
describe('OpenAPI document', () => {
  let testApp: ManagementTestApp;
  let document: Document;
  let operations: { path: string; method: string; operation: Operation }[];

  beforeAll(async () => {
    testApp = await startManagementTestApp();
    const response = await testApp.client().get<Document>('/api/schema/');
    expect(response.status).toBe(200);
    document = response.body;
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] })),
    );
  });

  afterAll(async () => {
    await testApp?.close();
  });

  const label = ({ path, method }: { path: string; method: string }) => `${method.toUpperCase()} ${path}`;
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? document.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;

  it('names every operation once', () => {
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(ids.filter((id) => !id || !/^[a-z0-9_]+$/.test(id))).toEqual([]);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('resolves every $ref', () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]);
    expect(refs.length).toBeGreaterThan(100);
    const dangling = refs.filter(
      (ref) =>
        !ref.startsWith('#/components/schemas/') || !document.components.schemas[ref.split('/').pop()!],
    );
    expect(dangling).toEqual([]);
  });

  it('describes each parameter of each path, and no other path parameter', () => {
    const wrong = operations.flatMap((entry) => {
      const inPath = [...entry.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = (entry.operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
      const names = declared.map((parameter) => parameter.name);
      const problems = [
        ...inPath.filter((name) => !names.includes(name)).map((name) => `${name} undocumented`),
        ...declared
          .filter((p) => !inPath.includes(p.name) || !p.required)
          .map((p) => `${p.name} not in path`),
      ];
      return problems.map((problem) => `${label(entry)}: ${problem}`);
    });
    expect(wrong).toEqual([]);
  });

  it('describes the errors every operation can answer: 401 and 403 unless public, 404 with an id, 503 always', () => {
    const missing = operations.flatMap((entry) => {
      const { operation, path } = entry;
      const expected = ['503'];
      if (operation['x-access']?.scope !== 'public') expected.push('401', '403');
      if (path.includes('{')) expected.push('404');
      if (operation.requestBody) expected.push('400', '413', '415');
      return expected
        .filter((status) => !operation.responses[status]?.content?.['application/json']?.schema)
        .map((status) => `${label(entry)}: ${status}`);
    });
    expect(missing).toEqual([]);
    const unavailable = operations[0].operation.responses['503'];
    expect(unavailable.headers).toHaveProperty('Retry-After');
  });

  it("documents the success status each handler answers (its @HttpCode, else Nest's 201 for POST and 200 otherwise), or only the refusal a handler always answers", () => {
    const controllers = new Map<string, Record<string, unknown>>();
    for (const module of testApp.app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as { name: string; prototype: Record<string, unknown> } | null;
        if (controller) controllers.set(controller.name, controller.prototype);
      }
    }
    const openApiPath = (route: RouteEntry) => route.path.replace(/:(\w+)/g, '{$1}');
    const wrong = routeTable(testApp.app).flatMap((route) => {
      const operation = document.paths[openApiPath(route)]?.[route.method.toLowerCase()];
      if (!operation) return [];
      const [controller, method] = route.handler.split('.');
      const handler = controllers.get(controller)?.[method] as object;
      const status =
        (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ??
        (route.method === 'POST' ? 201 : 200);
      const documented = Object.keys(operation.responses).filter((code) => /^[23]/.test(code));
      // A route that only refuses (the flag DELETE's 405) documents that status and no success; one
      // that sets its own among several (@AnswersStatuses) documents exactly those.
      const several = Reflect.getMetadata(ANSWERS_STATUSES, handler) as number[] | undefined;
      const expected = several ? several.map(String) : status < 400 ? [String(status)] : [];
      const right =
        documented.join() === expected.join() && operation.responses[String(status)] !== undefined;
      return right
        ? []
        : [`${route.method} ${route.path}: answers ${status}, documents ${documented.join(', ') || 'none'}`];
    });
    expect(wrong).toEqual([]);
  });

  it('documents a response schema for every success but a 204', () => {
    expect(operations.length).toBeGreaterThan(200);
    const undocumented = operations.flatMap((entry) =>
      Object.entries(entry.operation.responses)
        .filter(([status]) => status.startsWith('2') && status !== '204')
        .filter(([, response]) => !response.content?.['application/json']?.schema)
        .map(([status]) => `${label(entry)}: ${status}`),
    );
    expect(undocumented).toEqual([]);
  });

  it('gives every page its limit and offset, and names its envelope', () => {
    const pages = operations.filter(({ operation }) => {
      const success = resolve(operation.responses['200']?.content?.['application/json']?.schema);
      return success?.properties?.count !== undefined && success.properties.results !== undefined;
    });
    expect(pages.length).toBeGreaterThanOrEqual(25);
    const wrong = pages.flatMap((entry) => {
      const query = (entry.operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
      const integer = (name: string) =>
        query.find((parameter) => parameter.name === name)?.schema?.type === 'integer';
      const ref = entry.operation.responses['200'].content!['application/json'].schema!.$ref ?? '';
      return integer('limit') && integer('offset') && /\/Paginated\w+List$/.test(ref) ? [] : [label(entry)];
    });
    expect(wrong).toEqual([]);
  });

  it("documents the flag DELETE as the 405 it answers, without a body, and the usage dashboards' 200", () => {
    for (const root of ['/api/projects/{project_id}', '/api/environments/{environment_id}']) {
      const flag = document.paths[`${root}/feature_flags/{id}`];
      expect(Object.keys(flag.delete.responses).filter((status) => /^[23]/.test(status))).toEqual([]);
      expect(flag.delete.responses['405']).toEqual({ description: expect.any(String) });
      for (const action of ['dashboard', 'enrich_usage_dashboard']) {
        const responses = document.paths[`${root}/feature_flags/{id}/${action}`].post.responses;
        expect(Object.keys(responses).filter((status) => /^[23]/.test(status))).toEqual(['200']);
      }
    }
  });

  it('closes every model only answered, nested ones too, so a field no class declares fails the schema', () => {
    /** The names of the schemas `value` refers to, and those they refer to in turn. */
    const reachable = (value: unknown, names = new Set<string>()): Set<string> => {
      for (const [, name] of JSON.stringify(value).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
        if (!names.has(name)) {
          names.add(name);
          reachable(document.components.schemas[name], names);
        }
      }
      return names;
    };
    const answered = reachable(operations.map(({ operation }) => operation.responses));
    const taken = reachable(
      operations.map(({ operation }) => [operation.requestBody ?? null, operation.parameters ?? null]),
    );
    expect(answered.size).toBeGreaterThan(50);
    const open = [...answered].filter((name) => {
      const schema = document.components.schemas[name];
      return !taken.has(name) && schema.properties && schema.additionalProperties !== false;
    });
    expect(open).toEqual([]);
  });
});
