import { OpenApiResponseChecker, type CheckedResponse } from './openapi-response-check.util';
import {
  installOpenApiResponseCheck,
  registerOpenApiDocument,
  settleOpenApiResponseChecks,
  registerOpenApiDocumentOnce,
  unregisterOpenApiDocument,
} from './openapi-response-registry.util';

const error404 = {
  description: 'Not found',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

const document = {
  openapi: '3.0.0',
  paths: {
    '/api/projects/{project_id}/feature_flags': {
      get: {
        responses: {
          '200': {
            description: 'A page of flags',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/PaginatedFlagList' } } },
          },
          '404': error404,
        },
      },
    },
    '/api/projects/{project_id}/feature_flags/{id}': {
      get: {
        responses: {
          '200': {
            description: 'A flag',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Flag' } } },
          },
          '404': error404,
        },
      },
      delete: { responses: { '405': { description: 'Soft-delete with PATCH' } } },
    },
    '/api/projects/{project_id}/feature_flags/my_flags/': {
      get: {
        responses: {
          '200': {
            description: 'The flags for the key user',
            content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } },
          },
        },
      },
    },
    '/api/projects/{project_id}/events/export': {
      get: {
        responses: { '200': { description: 'CSV', content: { 'text/csv': { schema: { type: 'string' } } } } },
      },
    },
    '/api/fallback': {
      post: {
        responses: {
          '201': { description: 'Created', content: { 'application/json': { schema: { type: 'object' } } } },
          default: { $ref: '#/components/responses/Problem' },
        },
      },
    },
  },
  components: {
    responses: {
      Problem: {
        description: 'Any error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['type', 'code', 'detail'],
        properties: {
          type: { type: 'string' },
          code: { type: 'string' },
          detail: { type: 'string' },
          attr: { type: 'string', nullable: true },
        },
      },
      User: {
        type: 'object',
        required: ['id', 'email'],
        properties: { id: { type: 'integer' }, email: { type: 'string', format: 'email' } },
      },
      Flag: {
        type: 'object',
        required: ['id', 'key', 'created_at', 'created_by', 'rollout_percentage'],
        properties: {
          id: { type: 'integer' },
          key: { type: 'string', example: 'beta' },
          created_at: { type: 'string', format: 'date-time' },
          // Nest's spelling of a nullable reference.
          created_by: { nullable: true, type: 'object', allOf: [{ $ref: '#/components/schemas/User' }] },
          rollout_percentage: { type: 'number', nullable: true, minimum: 0, maximum: 100 },
          kind: { type: 'string', enum: ['boolean', 'multivariate'], nullable: true },
        },
      },
      PaginatedFlagList: {
        type: 'object',
        required: ['count', 'results'],
        properties: {
          count: { type: 'integer' },
          next: { type: 'string', format: 'uri', nullable: true },
          results: { type: 'array', items: { $ref: '#/components/schemas/Flag' } },
        },
      },
    },
  },
};

const BASE = 'http://127.0.0.1:8000';

const flag = {
  id: 7,
  key: 'beta',
  created_at: '2026-01-02T03:04:05.000Z',
  created_by: { id: 1, email: 'owner@example.com' },
  rollout_percentage: 50,
  kind: 'boolean',
};

function answer(
  method: string,
  path: string,
  status: number,
  body?: unknown,
  contentType: string | null = 'application/json; charset=utf-8',
): CheckedResponse {
  return {
    method,
    url: `${BASE}${path}`,
    status,
    contentType: body === undefined ? null : contentType,
    bodyText: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
  };
}

describe('OpenApiResponseChecker', () => {
  const checker = new OpenApiResponseChecker(document);

  it('accepts an answer whose status is documented and whose body matches its schema through $refs', () => {
    expect(checker.check(answer('GET', '/api/projects/1/feature_flags/7/', 200, flag))).toBeUndefined();
    expect(
      checker.check(
        answer('GET', '/api/projects/1/feature_flags/?limit=1', 200, { count: 1, results: [flag] }),
      ),
    ).toBeUndefined();
  });

  it('matches a path with or without its trailing slash, whatever the template has', () => {
    expect(checker.operationFor('GET', '/api/projects/1/feature_flags/7')?.name).toBe(
      'GET /api/projects/{project_id}/feature_flags/{id}',
    );
    expect(checker.operationFor('GET', '/api/projects/1/feature_flags/7/')?.name).toBe(
      'GET /api/projects/{project_id}/feature_flags/{id}',
    );
    expect(checker.operationFor('GET', '/api/projects/1/feature_flags/my_flags')?.name).toBe(
      'GET /api/projects/{project_id}/feature_flags/my_flags/',
    );
  });

  it('routes a literal segment before a path parameter, as the server does', () => {
    expect(
      checker.check(answer('GET', '/api/projects/1/feature_flags/my_flags/', 200, ['beta'])),
    ).toBeUndefined();
    // Checked against the {id} operation, this body would not be a flag.
    expect(checker.check(answer('GET', '/api/projects/1/feature_flags/8/', 200, ['beta']))).toMatchObject({
      operation: 'GET /api/projects/{project_id}/feature_flags/{id}',
      problem: '200 body does not match its schema',
    });
  });

  it("takes a method the literal path lacks as that path's unknown method, not the {id} operation's", () => {
    expect(checker.operationFor('DELETE', '/api/projects/1/feature_flags/my_flags/')).toBeUndefined();
    expect(checker.check(answer('DELETE', '/api/projects/1/feature_flags/my_flags/', 405))).toBeUndefined();
    expect(checker.check(answer('DELETE', '/api/projects/1/feature_flags/my_flags/', 204))).toMatchObject({
      problem: 'undocumented operation answered 204',
    });
  });

  it('fails a status the operation does not document', () => {
    expect(checker.check(answer('GET', '/api/projects/1/feature_flags/7/', 500, { detail: 'boom' }))).toEqual(
      {
        method: 'GET',
        path: '/api/projects/1/feature_flags/7/',
        status: 500,
        operation: 'GET /api/projects/{project_id}/feature_flags/{id}',
        problem: 'status 500 is not documented (documented: 200, 404)',
        errors: [],
      },
    );
  });

  it('takes `default` for any status, through a $ref to a shared response', () => {
    const problem = { type: 'validation_error', code: 'invalid_input', detail: 'No.', attr: null };
    expect(checker.check(answer('POST', '/api/fallback/', 400, problem))).toBeUndefined();
    expect(checker.check(answer('POST', '/api/fallback/', 409, { detail: 'No.' }))).toMatchObject({
      problem: 'default body does not match its schema',
      errors: ["(body) must have required property 'type'", "(body) must have required property 'code'"],
    });
  });

  it('names each field that does not match, with its path in the body', () => {
    const mismatch = checker.check(
      answer('GET', '/api/projects/1/feature_flags/', 200, {
        count: '1',
        results: [{ ...flag, created_at: 'yesterday', kind: 'other' }],
      }),
    );
    expect(mismatch?.errors).toEqual([
      '/count must be integer',
      '/results/0/created_at must match format "date-time"',
      '/results/0/kind must be equal to one of the allowed values: ["boolean","multivariate",null]',
    ]);
  });

  it('admits null where OpenAPI 3.0 says nullable (a type, an enum, a reference) and nowhere else', () => {
    const nulls = { ...flag, created_by: null, rollout_percentage: null, kind: null };
    expect(checker.check(answer('GET', '/api/projects/1/feature_flags/7/', 200, nulls))).toBeUndefined();
    expect(
      checker.check(answer('GET', '/api/projects/1/feature_flags/7/', 200, { ...flag, key: null }))?.errors,
    ).toEqual(['/key must be string']);
    expect(
      checker.check(
        answer('GET', '/api/projects/1/feature_flags/7/', 200, { ...flag, created_by: { id: 1 } }),
      )?.errors,
    ).toContain("/created_by must have required property 'email'");
  });

  it('fails a body the document does not describe, and a missing body it does', () => {
    expect(checker.check(answer('DELETE', '/api/projects/1/feature_flags/7/', 405))).toBeUndefined();
    expect(
      checker.check(answer('DELETE', '/api/projects/1/feature_flags/7/', 405, { detail: 'no' })),
    ).toMatchObject({
      problem: 'answered a body (application/json); the document describes none for 405',
    });
    expect(checker.check(answer('GET', '/api/projects/1/feature_flags/7/', 200))).toMatchObject({
      problem: 'answered no body; the document describes one for 200',
    });
  });

  it('fails a body that is not JSON where JSON is documented', () => {
    expect(checker.check(answer('GET', '/api/projects/1/feature_flags/7/', 200, '<html>'))).toMatchObject({
      problem: '200 body is not JSON',
    });
  });

  it('checks a streamed answer for its status and content type only', () => {
    const csv = (contentType: string): CheckedResponse => ({
      method: 'GET',
      url: `${BASE}/api/projects/1/events/export/`,
      status: 200,
      contentType,
      bodyText: undefined,
    });
    expect(checker.check(csv('text/csv; charset=utf-8'))).toBeUndefined();
    expect(checker.check(csv('application/javascript'))).toMatchObject({
      problem: 'content type application/javascript is not documented for 200 (documented: text/csv)',
    });
  });

  it('fails an operation the document lacks unless the server answered it as an unknown route', () => {
    expect(checker.check(answer('GET', '/api/nothing-here/', 200, { ok: true }))).toEqual({
      method: 'GET',
      path: '/api/nothing-here/',
      status: 200,
      operation: undefined,
      problem: 'undocumented operation answered 200',
      errors: [],
    });
    expect(checker.check(answer('POST', '/api/projects/1/feature_flags/7/', 201, {}))).toMatchObject({
      problem: 'undocumented operation answered 201',
    });
    const notFound = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };
    expect(checker.check(answer('GET', '/api/nothing-here/', 404, notFound))).toBeUndefined();
    expect(checker.check(answer('PUT', '/api/projects/1/feature_flags/7/', 405))).toBeUndefined();
  });

  it('expects an unknown route’s 404 in the error shape the document gives 404 elsewhere', () => {
    expect(checker.check(answer('GET', '/api/nothing-here/', 404, { message: 'Cannot GET' }))).toMatchObject({
      operation: undefined,
      problem: 'unknown route answered 404 does not match its schema',
    });
  });

  it('skips the probes, the document itself and CORS preflights the document does not describe', () => {
    expect(checker.check(answer('GET', '/_ready', 200, { status: 'ok' }))).toBeUndefined();
    expect(checker.check(answer('GET', '/metrics', 200, '# HELP', 'text/plain'))).toBeUndefined();
    expect(checker.check(answer('GET', '/api/schema/', 200, document))).toBeUndefined();
    expect(checker.check(answer('OPTIONS', '/api/projects/1/feature_flags/', 204))).toBeUndefined();
  });

  it('checks a HEAD as its GET, for the status only', () => {
    expect(checker.check(answer('HEAD', '/api/projects/1/feature_flags/7/', 200))).toBeUndefined();
    expect(checker.check(answer('HEAD', '/api/projects/1/feature_flags/7/', 418))).toMatchObject({
      problem: 'status 418 is not documented (documented: 200, 404)',
    });
  });

  it('prefixes the paths with the path of the document’s server', () => {
    const prefixed = new OpenApiResponseChecker({
      ...document,
      servers: [{ url: 'http://example.test/v1/' }],
    });
    expect(prefixed.operationFor('GET', '/v1/api/projects/1/feature_flags/')?.name).toBe(
      'GET /api/projects/{project_id}/feature_flags',
    );
    expect(prefixed.operationFor('GET', '/api/projects/1/feature_flags/')).toBeUndefined();
  });

  it('reads an OpenAPI 3.1 document as JSON Schema 2020-12 (null in a type list)', () => {
    const document31 = {
      openapi: '3.1.0',
      paths: {
        '/flags': {
          post: {
            responses: {
              '200': {
                description: 'Flags',
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      required: ['flags'],
                      properties: { flags: { type: 'object' }, errors: { type: ['boolean', 'null'] } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    const checker31 = new OpenApiResponseChecker(document31);
    expect(checker31.check(answer('POST', '/flags/?v=2', 200, { flags: {}, errors: null }))).toBeUndefined();
    expect(checker31.check(answer('POST', '/flags', 200, { flags: [] }))?.errors).toEqual([
      '/flags must be object',
    ]);
  });

  it('refuses a document that is not OpenAPI 3', () => {
    expect(() => new OpenApiResponseChecker({ swagger: '2.0', paths: {} })).toThrow(
      'not an OpenAPI 3 document',
    );
  });
});

describe('the fetch wrapper', () => {
  const answers = new Map<string, Response>();
  const asked: string[] = [];
  const realFetch = globalThis.fetch;

  beforeAll(() => {
    // The host is stood in by a fetch that answers from `answers`: this tests the wrapper, not a server.
    globalThis.fetch = (input) => {
      const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
      asked.push(url);
      const response = answers.get(url);
      return response ? Promise.resolve(response) : Promise.reject(new TypeError(`no answer for ${url}`));
    };
    installOpenApiResponseCheck({ currentTestName: () => expect.getState().currentTestName });
    registerOpenApiDocument(`${BASE}/`, document);
  });

  afterAll(() => {
    unregisterOpenApiDocument(BASE);
    globalThis.fetch = realFetch;
  });

  it('checks every answer from a registered origin, reading a JSON body from a copy, and none from others', async () => {
    const json = { 'Content-Type': 'application/json' };
    answers.set(
      `${BASE}/api/projects/1/feature_flags/7/`,
      new Response(JSON.stringify(flag), { headers: json }),
    );
    answers.set(
      `${BASE}/api/projects/1/feature_flags/8/`,
      new Response(JSON.stringify({ ...flag, id: 'eight' }), { headers: json }),
    );
    answers.set(`${BASE}/api/unknown/`, new Response('{}', { headers: json }));
    answers.set('http://127.0.0.1:9999/api/unknown/', new Response('{}', { headers: json }));

    const good = await fetch(`${BASE}/api/projects/1/feature_flags/7/`);
    const bad = await fetch(new Request(`${BASE}/api/projects/1/feature_flags/8/`));
    const unknown = await fetch(`${BASE}/api/unknown/`, { method: 'post' });
    await fetch('http://127.0.0.1:9999/api/unknown/');
    // The test still reads its own answer.
    expect(await good.json()).toEqual(flag);
    expect(await bad.json()).toMatchObject({ id: 'eight' });
    expect(unknown.status).toBe(200);

    const { checked, mismatches } = await settleOpenApiResponseChecks();
    expect(checked).toBe(3);
    expect(mismatches).toEqual([
      {
        method: 'GET',
        path: '/api/projects/1/feature_flags/8/',
        status: 200,
        operation: 'GET /api/projects/{project_id}/feature_flags/{id}',
        problem: '200 body does not match its schema',
        errors: ['/id must be integer'],
        body: JSON.stringify({ ...flag, id: 'eight' }),
        test: expect.stringContaining('checks every answer from a registered origin'),
      },
      {
        method: 'POST',
        path: '/api/unknown/',
        status: 200,
        operation: undefined,
        problem: 'undocumented operation answered 200',
        errors: [],
        test: expect.stringContaining('checks every answer from a registered origin'),
      },
    ]);
  });

  it("registers a server's own document once, on a client's first request, and leaves a silent server to the test", async () => {
    const server = 'http://127.0.0.1:9998';
    answers.set(`${server}/api/schema/`, new Response(JSON.stringify(document)));
    answers.set(`${server}/api/projects/1/feature_flags/7/`, Response.json(flag));
    const before = (await settleOpenApiResponseChecks()).checked;

    await registerOpenApiDocumentOnce(server);
    await registerOpenApiDocumentOnce(`${server}/`);
    await expect(registerOpenApiDocumentOnce('http://127.0.0.1:9997')).resolves.toBeUndefined();
    await fetch(`${server}/api/projects/1/feature_flags/7/`);

    expect(asked.filter((url) => url.endsWith('/api/schema/'))).toEqual([
      `${server}/api/schema/`,
      'http://127.0.0.1:9997/api/schema/',
    ]);
    expect((await settleOpenApiResponseChecks()).checked).toBe(before + 1);
    unregisterOpenApiDocument(server);
  });
});
