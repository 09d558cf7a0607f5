import { PersonalApiKey } from '@hogbase/postgres';
import { ManagementTestApp, startManagementTestApp } from './management-test-app';

describe('HTTP conventions', () => {
  let testApp: ManagementTestApp;
  let owner: Awaited<ReturnType<ManagementTestApp['createOwner']>>;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
    owner = await testApp.createOwner('conventions@example.test', 'Conventions');
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it('answers 404 "Endpoint not found." for a path no route serves', async () => {
    const response = await owner.api.get('/api/nothing-here/');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: 'Endpoint not found.',
      attr: null,
    });
  });

  it('answers 405 with Allow for a known path asked with another method', async () => {
    const response = await owner.api.request('PUT', `/api/organizations/${owner.organizationId}/`, {
      body: {},
    });
    expect(response.status).toBe(405);
    expect(response.body).toEqual({
      type: 'invalid_request',
      code: 'method_not_allowed',
      detail: 'Method "PUT" not allowed.',
      attr: null,
    });
    expect(response.headers.get('allow')).toBe('DELETE, GET, PATCH');
  });

  it("answers 405 with the action's own Allow on a static action path, never calling the :id route beside it", async () => {
    const flags = `/api/projects/${owner.projectId}/feature_flags`;
    for (const [method, path, allow] of [
      ['DELETE', `${flags}/activity/`, 'GET'],
      ['OPTIONS', `${flags}/activity/`, 'GET'],
      ['PATCH', `${flags}/my_flags/`, 'GET'],
      ['GET', `${flags}/user_blast_radius/`, 'POST'],
      ['DELETE', `/api/organizations/${owner.organizationId}/invites/bulk/`, 'POST'],
      ['DELETE', `/api/environments/${owner.projectId}/feature_flags/local_evaluation/`, 'GET'],
    ]) {
      const response = await owner.api.request(method, path);
      expect({ method, path, status: response.status, allow: response.headers.get('allow') }).toEqual({
        method,
        path,
        status: 405,
        allow,
      });
      if (method !== 'OPTIONS') expect(response.body).toMatchObject({ code: 'method_not_allowed' });
    }
    // A real flag id still reaches the :id route, whose methods an unserved one lists.
    const flag = await owner.api.post(`${flags}/`, { key: 'allow-check', filters: {} });
    expect(flag.status).toBe(201);
    const put = await owner.api.request('PUT', `${flags}/${flag.body.id}/`, { body: {} });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'DELETE, GET, PATCH']);
    expect((await owner.api.request('HEAD', `${flags}/activity/`)).status).toBe(200);
  });

  it('serves a route with and without its trailing slash', async () => {
    const withSlash = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
    const withoutSlash = await owner.api.get(`/api/organizations/${owner.organizationId}`);
    expect([withSlash.status, withoutSlash.status]).toEqual([200, 200]);
    expect(withoutSlash.body).toEqual(withSlash.body);
  });

  it('answers 400 parse_error to a body that is not JSON', async () => {
    const response = await owner.api.request('POST', '/api/organizations/', { rawBody: '{"name": ' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      type: 'invalid_request',
      code: 'parse_error',
      detail: 'JSON parse error - the request body is not valid JSON.',
      attr: null,
    });
  });

  it('answers 413 to a body over the limit, without reading it', async () => {
    const response = await owner.api.request('POST', '/api/organizations/', {
      rawBody: JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('payload_too_large');
  });

  it('answers 400 to a JSON body that is not an object where an object is expected', async () => {
    const list = await owner.api.request('POST', '/api/organizations/', { rawBody: '[]' });
    expect(list).toMatchObject({
      status: 400,
      body: {
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Invalid data. Expected a dictionary, but got list.',
        attr: null,
      },
    });
    for (const [rawBody, got] of [
      ['"name"', 'str'],
      ['42', 'int'],
      ['null', 'NoneType'],
      ['true', 'bool'],
    ]) {
      const response = await owner.api.request('POST', '/api/organizations/', { rawBody });
      expect({ rawBody, status: response.status, detail: response.body.detail }).toEqual({
        rawBody,
        status: 400,
        detail: `Invalid data. Expected a dictionary, but got ${got}.`,
      });
    }
  });

  it('reads a write without a body as an empty object', async () => {
    const response = await owner.api.request('POST', '/api/organizations/');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'name',
    });
  });

  it('answers 415 to a body that is not JSON', async () => {
    const response = await owner.api.request('POST', '/api/organizations/', {
      rawBody: 'name=Acme',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(response.status).toBe(415);
    expect(response.body).toEqual({
      type: 'invalid_request',
      code: 'unsupported_media_type',
      detail: 'Unsupported media type "text/plain" in request.',
      attr: null,
    });
  });

  it('reports health, readiness and metrics without credentials', async () => {
    const client = testApp.client();
    expect((await client.get('/_health')).status).toBe(200);
    expect(await client.get('/_ready')).toMatchObject({
      status: 200,
      body: { status: 'ok', checks: { postgres: true } },
    });
    const metrics = await client.get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('management_http_request_duration_seconds');
  });

  it('serves the OpenAPI document at /api/schema/ with the bearer scheme', async () => {
    const { status, body } = await testApp.client().get('/api/schema/');
    expect(status).toBe(200);
    expect(body.openapi).toMatch(/^3\./);
    expect(body.components.securitySchemes.PersonalAPIKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(body.paths['/api/organizations/{organization_id}/invites/bulk'].post.security).toEqual([
      { PersonalAPIKey: ['organization_member:write'] },
    ]);
  });

  it('echoes a request id on every response', async () => {
    const response = await owner.api.request('GET', '/api/organizations/', {
      headers: { 'X-Request-Id': 'trace-123' },
    });
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    expect((await owner.api.get('/api/organizations/')).headers.get('x-request-id')).toMatch(
      /^[0-9a-f-]{36}$/,
    );
  });

  it("records a key's last use, at most once an hour", async () => {
    const key = await testApp.createKey('conventions@example.test', ['organization:read']);
    const keys = testApp.dataSource.getRepository(PersonalApiKey);
    const stored = async () =>
      (await keys.find()).find((row) => row.maskValue === `${key.slice(0, 4)}...${key.slice(-4)}`)!;
    expect((await stored()).lastUsedAt).toBeNull();
    await testApp.client(`Bearer ${key}`).get('/api/organizations/');
    const firstUse = (await stored()).lastUsedAt;
    expect(firstUse).toBeInstanceOf(Date);
    await testApp.client(`Bearer ${key}`).get('/api/organizations/');
    expect((await stored()).lastUsedAt).toEqual(firstUse);
  });

  it('answers the user and the key behind the request', async () => {
    const me = await owner.api.get('/api/users/@me/');
    expect(me.body).toMatchObject({
      email: 'conventions@example.test',
      organization: { id: owner.organizationId },
    });
    const current = await owner.api.get('/api/personal_api_keys/@current/');
    expect(current.body).toMatchObject({
      scopes: ['*'],
      mask_value: `${owner.key.slice(0, 4)}...${owner.key.slice(-4)}`,
    });
    expect(JSON.stringify(current.body)).not.toContain(owner.key);
  });
});
