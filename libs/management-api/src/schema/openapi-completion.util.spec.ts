import type { OpenAPIObject, OperationObject, ParameterObject, SchemaObject } from '@nestjs/swagger';
import { completeOpenApiDocument } from './openapi-completion.util';

const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['validation_error', 'invalid_request'] },
    code: { type: 'string', enum: ['not_found', 'invalid_input'] },
    detail: { type: 'string' },
    attr: { type: 'string', nullable: true },
  },
  required: ['type', 'code', 'detail', 'attr'],
};

const ok = (schema: SchemaObject | { $ref: string }) => ({
  200: { description: 'OK', content: { 'application/json': { schema } } },
});

function documentOf(
  paths: Record<string, Record<string, OperationObject>>,
  schemas: Record<string, SchemaObject> = {},
): OpenAPIObject {
  return {
    openapi: '3.0.0',
    info: { title: 't', version: '1' },
    paths,
    components: { schemas: { Error: ERROR_SCHEMA, ...schemas } },
  };
}

const read = (extra: Partial<OperationObject> = {}): OperationObject =>
  ({
    responses: ok({ type: 'object' }),
    'x-access': { scope: 'organization:read' },
    ...extra,
  }) as OperationObject;

describe('completeOpenApiDocument', () => {
  it('documents the path parameters the guard reads and drops those the path does not have', () => {
    const operation = read({
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'project_id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'limit', in: 'query', schema: { type: 'integer' } },
      ],
      'x-access': { scope: 'organization:read', organizationParam: 'organization_id' },
    } as Partial<OperationObject>);
    completeOpenApiDocument(
      documentOf({ '/api/organizations/{organization_id}/domains/{id}': { get: operation } }),
    );
    const parameters = operation.parameters as ParameterObject[];
    expect(parameters.map(({ name, in: location }) => `${location}:${name}`)).toEqual([
      'path:organization_id',
      'path:id',
      'query:limit',
    ]);
    expect(parameters[0]).toMatchObject({ required: true, example: '@current' });
    expect(parameters[0].description).toContain('UUID of the organization');
  });

  it('adds the error answers each operation can give, from its access rule, path, method and query', () => {
    const document = documentOf({
      '/api/organizations': {
        get: read({ parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }] }),
        post: read({ requestBody: { content: {} } }),
      },
      '/api/organizations/{id}': { delete: read(), get: read() },
      '/api/things': {
        get: { responses: ok({ type: 'object' }), 'x-access': { scope: 'public' } } as OperationObject,
      },
      '/api/events': {
        get: read({ parameters: [{ name: 'after', in: 'query', schema: { type: 'string' } }] }),
      },
    });
    completeOpenApiDocument(document);
    const statuses = (path: string, method: 'get' | 'post' | 'delete') =>
      Object.keys(document.paths[path][method]!.responses);
    expect(statuses('/api/organizations', 'get')).toEqual(['200', '401', '403', '503']);
    expect(statuses('/api/organizations', 'post')).toEqual(['200', '400', '401', '403', '413', '415', '503']);
    expect(statuses('/api/organizations/{id}', 'get')).toEqual(['200', '401', '403', '404', '503']);
    expect(statuses('/api/organizations/{id}', 'delete')).toEqual(['200', '400', '401', '403', '404', '503']);
    expect(statuses('/api/things', 'get')).toEqual(['200', '503']);
    expect(statuses('/api/events', 'get')).toEqual(['200', '400', '401', '403', '503']);
    expect(document.paths['/api/things'].get!.responses[503]).toMatchObject({
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error503' } } },
    });
  });

  it('narrows the error body of each status to the codes that status carries', () => {
    const document = completeOpenApiDocument(documentOf({ '/api/organizations/{id}': { get: read() } }));
    const notFound = document.components!.schemas!.Error404 as SchemaObject;
    expect(notFound.properties!.code).toEqual({ type: 'string', enum: ['not_found'] });
    expect(notFound.properties!.type).toEqual({ type: 'string', enum: ['invalid_request'] });
    const unauthorized = document.components!.schemas!.Error401 as SchemaObject;
    expect(unauthorized.properties!.code).toEqual({
      type: 'string',
      enum: ['not_authenticated', 'authentication_failed'],
    });
  });

  it("keeps a status the handler documented itself, such as a flag DELETE's 405 without a body", () => {
    const refused = { description: 'Refused: delete with PATCH {"deleted": true}' };
    const document = completeOpenApiDocument(
      documentOf({
        '/api/flags/{id}': { delete: read({ responses: { 405: refused, 404: { description: 'gone' } } }) },
      }),
    );
    expect(document.paths['/api/flags/{id}'].delete!.responses).toMatchObject({
      404: { description: 'gone' },
      405: refused,
    });
  });

  it('names operations after their path and action, PostHog style, telling an object action from a collection one', () => {
    const page: SchemaObject = { type: 'object', properties: { results: { type: 'array' } } };
    const document = completeOpenApiDocument(
      documentOf(
        {
          '/api/organizations/{organization_id}/domains': {
            get: read({ responses: ok({ $ref: '#/components/schemas/Page' }) }),
            post: read(),
          },
          '/api/organizations/{organization_id}/domains/{id}': {
            get: read(),
            patch: read(),
            put: read(),
            delete: read(),
          },
          '/api/organizations/{organization_id}/domains/{id}/verify': { post: read() },
          '/api/environments/{environment_id}/flags/activity': { get: read({ responses: ok(page) }) },
          '/api/environments/{environment_id}/flags/{id}/activity': { get: read({ responses: ok(page) }) },
          '/api/users/@me': { get: read() },
        },
        { Page: page },
      ),
    );
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => (operation as OperationObject).operationId),
    );
    expect(ids).toEqual([
      'organizations_domains_list',
      'organizations_domains_create',
      'organizations_domains_retrieve',
      'organizations_domains_partial_update',
      'organizations_domains_update',
      'organizations_domains_destroy',
      'organizations_domains_verify_create',
      'environments_flags_activity_list',
      'environments_flags_activity_list_detail',
      'users_me_retrieve',
    ]);
  });

  it('refuses to name two operations alike', () => {
    const document = documentOf({
      '/api/a-b': { get: read() },
      '/api/a_b': { get: read() },
    });
    expect(() => completeOpenApiDocument(document)).toThrow(
      'operationId a_b_retrieve names both /api/a-b and /api/a_b',
    );
  });

  it('closes the models only answered, and leaves open those a request sends and free-form objects', () => {
    const model = (properties: SchemaObject['properties']): SchemaObject => ({ type: 'object', properties });
    const document = completeOpenApiDocument(
      documentOf(
        {
          '/api/things': {
            get: read({ responses: ok({ $ref: '#/components/schemas/Thing' }) }),
            post: read({
              requestBody: {
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Shared' } } },
              },
              responses: ok({ $ref: '#/components/schemas/Shared' }),
            }),
          },
        },
        {
          Thing: model({
            owner: { $ref: '#/components/schemas/Owner' },
            extra: { type: 'object', additionalProperties: true },
          }),
          Owner: model({ id: { type: 'integer' } }),
          Shared: model({ name: { type: 'string' } }),
          Loose: { type: 'object', additionalProperties: true, properties: { a: { type: 'string' } } },
        },
      ),
    );
    const schemas = document.components!.schemas! as Record<string, SchemaObject>;
    expect(schemas.Thing.additionalProperties).toBe(false);
    expect(schemas.Owner.additionalProperties).toBe(false);
    expect(schemas.Thing.properties!.extra).toEqual({ type: 'object', additionalProperties: true });
    expect(schemas.Shared.additionalProperties).toBeUndefined();
    expect(schemas.Error401.additionalProperties).toBe(false);
    expect(schemas.Loose.additionalProperties).toBe(true);
  });
});
