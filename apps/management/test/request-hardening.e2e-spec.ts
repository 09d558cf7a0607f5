import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ManagementTestApp, startManagementTestApp } from './management-test-app';

/** Everything the app logs, as text, so a test can look for what must never be there. */
class LogCapture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

/** The same nesting as JSON text: JSON.stringify itself overflows the stack at 5,000 levels. */
function nestedJson(depth: number): string {
  const leaf = JSON.stringify(nested(0));
  return `${'{"type":"AND","values":['.repeat(depth)}${leaf}${']}'.repeat(depth)}`;
}

function nested(depth: number): unknown {
  let value: unknown = { key: 'email', value: 'x', operator: 'exact', type: 'person' };
  for (let level = 0; level < depth; level += 1) value = { type: 'AND', values: [value] };
  return value;
}

describe('request hardening: headers, credentials in logs, bounds on input', () => {
  let testApp: ManagementTestApp;
  let owner: Awaited<ReturnType<ManagementTestApp['createOwner']>>;
  const logs = new LogCapture();

  beforeAll(async () => {
    testApp = await startManagementTestApp({}, { logger: pino({ level: 'info' }, logs) });
    owner = await testApp.createOwner('hardening@example.test', 'Hardening');
  });

  afterAll(async () => {
    await testApp?.close();
  });

  describe('security headers', () => {
    it.each([
      ['a success', '/api/users/@me/', true],
      ['a 401', '/api/organizations/', false],
      ['a 404', '/api/nothing-here/', true],
    ])('sends nosniff, DENY framing and a referrer policy on %s', async (_name, path, authenticated) => {
      const response = await (authenticated ? owner.api : testApp.client()).get(path);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    });

    it('sends no HSTS over plain HTTP, nor for a forwarded https scheme it does not trust', async () => {
      const plain = await owner.api.get('/api/users/@me/');
      const forwarded = await owner.api.request('GET', '/api/users/@me/', {
        headers: { 'X-Forwarded-Proto': 'https' },
      });
      expect(plain.headers.get('strict-transport-security')).toBeNull();
      expect(forwarded.headers.get('strict-transport-security')).toBeNull();
    });

    it('sends HSTS when a trusted proxy says the request came over TLS', async () => {
      const behindProxy = await startManagementTestApp({ trustProxy: true });
      try {
        const response = await behindProxy.client().request('GET', '/api/users/@me/', {
          headers: { 'X-Forwarded-Proto': 'https' },
        });
        expect(response.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
      } finally {
        await behindProxy.close();
      }
    });
  });

  describe('credentials never reach the request log', () => {
    it('redacts keys sent in the query string, in X-API-Key and in Authorization', async () => {
      const secrets = {
        personal_api_key: `${owner.key}`,
        api_key: 'phx_apiKeyInQueryString0123456789',
        token: 'token-in-query-string-0123456789',
        access_token: 'access-token-in-query-0123456789',
      };
      for (const [name, value] of Object.entries(secrets)) {
        await owner.api.get(`/api/users/@me/?${name}=${encodeURIComponent(value)}&limit=1`);
      }
      const headerKey = 'x-api-key-value-0123456789';
      await owner.api.request('GET', '/api/users/@me/', { headers: { 'X-API-Key': headerKey } });
      await testApp
        .client()
        .get(`/api/projects/${owner.projectId}/feature_flags/?personal_api_key=${owner.key}`);

      expect(logs.text).toContain('/api/users/@me/');
      for (const value of [...Object.values(secrets), headerKey, owner.key]) {
        expect(logs.text).not.toContain(value);
      }
      expect(logs.text).toContain('[redacted]');
    });
  });

  describe('absolute links', () => {
    /** A GET with a Host header of the client's choosing (fetch does not let a caller set one). */
    function getWithHost(path: string, host: string): Promise<{ status: number; body: any }> {
      const { port } = new URL(testApp.baseUrl);
      return new Promise((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port, path, headers: { Host: host, Authorization: `Bearer ${owner.key}` } },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
          },
        );
        request.on('error', reject);
        request.end();
      });
    }

    it('builds pagination links on SITE_URL, not on the Host header a client sent', async () => {
      for (const index of [1, 2, 3]) {
        await owner.api.post(`/api/projects/${owner.projectId}/feature_flags/`, {
          key: `links-${index}`,
          filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
        });
      }
      const page = await getWithHost(
        `/api/projects/${owner.projectId}/feature_flags/?limit=1&offset=1`,
        'attacker.example',
      );
      expect(page.status).toBe(200);
      for (const link of [page.body.next, page.body.previous]) {
        expect(new URL(link).origin).toBe(testApp.baseUrl);
      }
      const activity = await getWithHost(
        `/api/projects/${owner.projectId}/feature_flags/activity/?limit=1`,
        'attacker.example',
      );
      expect(new URL(activity.body.next).origin).toBe(testApp.baseUrl);
    });

    it('follows X-Forwarded-Host and -Proto when proxies are trusted', async () => {
      const behindProxy = await startManagementTestApp({ trustProxy: true });
      try {
        const proxied = await behindProxy.createOwner('proxied@example.test');
        for (const index of [1, 2]) {
          await proxied.api.post(`/api/projects/${proxied.projectId}/feature_flags/`, {
            key: `proxied-${index}`,
            filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
          });
        }
        const response = await proxied.api.request(
          'GET',
          `/api/projects/${proxied.projectId}/feature_flags/?limit=1`,
          { headers: { 'X-Forwarded-Host': 'analytics.example.com', 'X-Forwarded-Proto': 'https' } },
        );
        expect(response.status).toBe(200);
        expect(new URL(response.body.next).origin).toBe('https://analytics.example.com');
      } finally {
        await behindProxy.close();
      }
    });
  });

  describe('bounds on input', () => {
    it('answers 400 to a flag filter nested 5,000 levels, and keeps serving', async () => {
      const response = await owner.api.request('POST', `/api/projects/${owner.projectId}/feature_flags/`, {
        rawBody: `{"key":"deep","filters":{"groups":[{"rollout_percentage":100,"properties":[${nestedJson(5_000)}]}]}}`,
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: null });
      expect((await owner.api.get('/api/users/@me/')).status).toBe(200);
    });

    it('accepts a body nested as deep as real filters go', async () => {
      const response = await owner.api.post(`/api/projects/${owner.projectId}/feature_flags/`, {
        key: 'shallow',
        filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: nested(20) } },
      });
      expect(response.status).toBe(201);
    });

    it.each([
      ['a flag id past bigint', () => `/api/projects/${owner.projectId}/feature_flags/99999999999999999999/`],
      ['a flag id past int4', () => `/api/projects/${owner.projectId}/feature_flags/4294967296/`],
      ['a negative flag id', () => `/api/projects/${owner.projectId}/feature_flags/-1/`],
      ['a role id that is no UUID', () => `/api/organizations/${owner.organizationId}/roles/12/`],
      ['a domain id that is no UUID', () => `/api/organizations/${owner.organizationId}/domains/1e400/`],
    ])('answers 404 to %s', async (_name, path) => {
      const response = await owner.api.get(path());
      expect(response.status).toBe(404);
    });

    it.each([
      ['limit', 'limit=99999999999999999999999'],
      ['offset', 'offset=99999999999999999999999'],
      ['a float limit', 'limit=1e400'],
    ])('answers a list with an enormous %s without a server error', async (_name, query) => {
      const response = await owner.api.get(`/api/projects/${owner.projectId}/feature_flags/?${query}`);
      expect(response.status).toBeLessThan(500);
    });

    it.each([
      ['a rollout percentage past any integer', { rollout_percentage: 1e300 }],
      ['a rollout percentage that is not finite', { rollout_percentage: 'Infinity' }],
      [
        'a NUL byte in a property value',
        { properties: [{ key: 'email', value: 'a\u0000b', type: 'person' }] },
      ],
    ])('answers 400 to a flag with %s', async (_name, group) => {
      const response = await owner.api.post(`/api/projects/${owner.projectId}/feature_flags/`, {
        key: `bounds-${Math.random().toString(36).slice(2)}`,
        filters: { groups: [{ properties: [], rollout_percentage: 50, ...group }] },
      });
      expect(response.status).toBe(400);
    });

    it('answers 400 to a NUL byte in a name stored as text', async () => {
      const response = await owner.api.patch(`/api/organizations/${owner.organizationId}/`, {
        name: 'nul\u0000name',
      });
      expect(response.status).toBe(400);
    });

    it('answers 400 to a member level past any integer', async () => {
      const response = await owner.api.patch(
        `/api/organizations/${owner.organizationId}/members/${owner.user.uuid}/`,
        { level: 1e300 },
      );
      expect(response.status).toBe(400);
    });
  });
});
