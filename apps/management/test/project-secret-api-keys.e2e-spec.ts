import { createHash } from 'node:crypto';
import { MembershipLevel, ProjectSecretApiKey } from '@hogbase/postgres';
import { ISO_8601_PATTERN as ISO_8601 } from '@hogbase/test-support';
import { INSUFFICIENT_LEVEL, NOT_FOUND, validationError } from './expected-bodies';
import { ApiClient, ManagementTestApp, startManagementTestApp, TestUser } from './management-test-app';

const SECRET_KEY = /^phs_[0-9A-Za-z]{40,48}$/;
const READ_FLAGS = ['feature_flag:read'];

const sha256 = (value: string) => `sha256$${createHash('sha256').update(value).digest('hex')}`;

describe('project secret API keys', () => {
  let testApp: ManagementTestApp;
  let owner: TestUser & { organizationId: string; projectId: number };
  let emailCounter = 0;
  const email = (label: string) => `${label}-${++emailCounter}@secret-keys.test`;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
    owner = await testApp.createOwner(email('owner'));
  });

  afterAll(async () => {
    await testApp?.close();
  });

  const keysPath = (projectId: number, suffix = '') =>
    `/api/projects/${projectId}/project_secret_api_keys/${suffix}`;

  async function createKey(api: ApiClient, projectId: number, label: string) {
    const response = await api.post(keysPath(projectId), { label, scopes: READ_FLAGS });
    expect(response.status).toBe(201);
    return response.body as { id: string; value: string; mask_value: string };
  }

  describe('create, read, update, roll, delete', () => {
    it('creates a key whose value is shown once, stored only as its SHA-256', async () => {
      const created = await owner.api.post(keysPath(owner.projectId), {
        label: 'Backend',
        scopes: READ_FLAGS,
        // Read-only fields a client sends are ignored.
        mask_value: 'phs_...nope',
        last_used_at: '2020-01-01T00:00:00Z',
      });
      expect(created.status).toBe(201);
      const value: string = created.body.value;
      expect(value).toMatch(SECRET_KEY);
      expect(created.body).toEqual({
        id: expect.any(String),
        label: 'Backend',
        value,
        mask_value: `phs_...${value.slice(-4)}`,
        created_at: expect.stringMatching(ISO_8601),
        created_by: expect.objectContaining({ id: owner.user.id, email: owner.user.email }),
        last_used_at: null,
        last_rolled_at: null,
        scopes: READ_FLAGS,
      });

      const row = await testApp.dataSource
        .getRepository(ProjectSecretApiKey)
        .findOneByOrFail({ id: created.body.id });
      expect(row).toMatchObject({
        teamId: owner.projectId,
        secureValue: sha256(value),
        maskValue: created.body.mask_value,
      });
      const [raw] = await testApp.dataSource.query<Record<string, unknown>[]>(
        'SELECT * FROM project_secret_api_keys WHERE id = $1',
        [created.body.id],
      );
      expect(JSON.stringify(raw)).not.toContain(value);
      expect(JSON.stringify(raw)).not.toContain(value.slice(4, -4));

      const retrieved = await owner.api.get(keysPath(owner.projectId, `${created.body.id}/`));
      expect(retrieved.status).toBe(200);
      expect(retrieved.body).toEqual({ ...created.body, value: null });
      const listed = await owner.api.get(keysPath(owner.projectId));
      expect(JSON.stringify(listed.body)).not.toContain(value);
    });

    it('lists the keys newest first, paginated, with their values null', async () => {
      const owner = await testApp.createOwner(email('lister'));
      for (const label of ['first', 'second', 'third']) await createKey(owner.api, owner.projectId, label);
      const listed = await owner.api.get(keysPath(owner.projectId));
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ count: 3, next: null, previous: null });
      expect(listed.body.results.map((key: { label: string }) => key.label)).toEqual([
        'third',
        'second',
        'first',
      ]);
      expect(listed.body.results.map((key: { value: unknown }) => key.value)).toEqual([null, null, null]);
      const page = await owner.api.get(`${keysPath(owner.projectId)}?limit=1&offset=1`);
      expect(page.body.results.map((key: { label: string }) => key.label)).toEqual(['second']);
      expect(page.body.count).toBe(3);
    });

    it('renames a key and sets its scopes with PATCH and PUT, showing no value', async () => {
      const key = await createKey(owner.api, owner.projectId, 'To rename');
      const patched = await owner.api.patch(keysPath(owner.projectId, `${key.id}/`), { label: 'Renamed' });
      expect([patched.status, patched.body.label, patched.body.value, patched.body.mask_value]).toEqual([
        200,
        'Renamed',
        null,
        key.mask_value,
      ]);
      const put = await owner.api.request('PUT', keysPath(owner.projectId, `${key.id}/`), {
        body: { label: 'Put', scopes: READ_FLAGS },
      });
      expect([put.status, put.body.label, put.body.scopes, put.body.value]).toEqual([
        200,
        'Put',
        READ_FLAGS,
        null,
      ]);
      const incomplete = await owner.api.request('PUT', keysPath(owner.projectId, `${key.id}/`), {
        body: { label: 'No scopes' },
      });
      expect([incomplete.status, incomplete.body]).toEqual([
        400,
        validationError('required', 'This field is required.', 'scopes'),
      ]);
      const unchanged = await owner.api.patch(keysPath(owner.projectId, `${key.id}/`), { label: 'Put' });
      expect(unchanged.status).toBe(200);
    });

    it('rolls a key: a new value once, the old hash gone, last_rolled_at set', async () => {
      const key = await createKey(owner.api, owner.projectId, 'To roll');
      const rolled = await owner.api.post(keysPath(owner.projectId, `${key.id}/roll/`));
      expect(rolled.status).toBe(200);
      expect(rolled.body.value).toMatch(SECRET_KEY);
      expect(rolled.body.value).not.toBe(key.value);
      expect(rolled.body).toMatchObject({
        id: key.id,
        label: 'To roll',
        mask_value: `phs_...${rolled.body.value.slice(-4)}`,
        last_rolled_at: expect.stringMatching(ISO_8601),
      });
      const repository = testApp.dataSource.getRepository(ProjectSecretApiKey);
      expect(await repository.existsBy({ secureValue: sha256(key.value) })).toBe(false);
      expect((await repository.findOneByOrFail({ id: key.id })).secureValue).toBe(sha256(rolled.body.value));
      const retrieved = await owner.api.get(keysPath(owner.projectId, `${key.id}/`));
      expect([retrieved.body.value, retrieved.body.last_rolled_at]).toEqual([
        null,
        rolled.body.last_rolled_at,
      ]);
    });

    it('deletes a key (204), after which it is not found', async () => {
      const key = await createKey(owner.api, owner.projectId, 'To delete');
      const deleted = await owner.api.delete(keysPath(owner.projectId, `${key.id}/`));
      expect([deleted.status, deleted.body]).toEqual([204, null]);
      expect(await testApp.dataSource.getRepository(ProjectSecretApiKey).existsBy({ id: key.id })).toBe(
        false,
      );
      for (const response of [
        await owner.api.get(keysPath(owner.projectId, `${key.id}/`)),
        await owner.api.delete(keysPath(owner.projectId, `${key.id}/`)),
        await owner.api.post(keysPath(owner.projectId, `${key.id}/roll/`)),
      ]) {
        expect([response.status, response.body]).toEqual([404, NOT_FOUND]);
      }
    });

    it('serves the project named @current', async () => {
      const listed = await owner.api.get('/api/projects/@current/project_secret_api_keys/');
      expect(listed.status).toBe(200);
      expect(listed.body.count).toBeGreaterThan(0);
    });
  });

  describe('validation', () => {
    const post = (body: unknown) => owner.api.post(keysPath(owner.projectId), body);

    it.each<[string, unknown, ReturnType<typeof validationError>]>([
      ['no label', { scopes: READ_FLAGS }, validationError('required', 'This field is required.', 'label')],
      [
        'a blank label',
        { label: '  ', scopes: READ_FLAGS },
        validationError('blank', 'This field may not be blank.', 'label'),
      ],
      [
        'a label past 40 characters',
        { label: 'x'.repeat(41), scopes: READ_FLAGS },
        validationError('max_length', 'Ensure this field has no more than 40 characters.', 'label'),
      ],
      ['no scopes', { label: 'No scopes' }, validationError('required', 'This field is required.', 'scopes')],
      [
        'scopes that are not a list',
        { label: 'x', scopes: 'feature_flag:read' },
        validationError('invalid_input', 'Expected a list of items.', 'scopes'),
      ],
      [
        'empty scopes',
        { label: 'x', scopes: [] },
        validationError('min_length', 'This list may not be empty.', 'scopes'),
      ],
      [
        'the wildcard scope',
        { label: 'x', scopes: ['*'] },
        validationError(
          'invalid',
          "Wildcard scope '*' is not allowed for project API keys. Please specify explicit scopes.",
          'scopes',
        ),
      ],
      [
        'an unknown scope',
        { label: 'x', scopes: ['feature_flag:delete'] },
        validationError('invalid', 'Invalid scope: feature_flag:delete', 'scopes'),
      ],
      [
        'an unknown object',
        { label: 'x', scopes: ['kitchen:read'] },
        validationError('invalid', 'Invalid scope: kitchen:read', 'scopes'),
      ],
      [
        'a valid scope a secret key cannot have',
        { label: 'x', scopes: ['feature_flag:read', 'feature_flag:write'] },
        validationError(
          'invalid',
          "Scope 'feature_flag:write' can not be assigned to a project secret API key. Allowed scopes: feature_flag:read",
          'scopes',
        ),
      ],
    ])('refuses %s', async (_name, body, expected) => {
      const before = await testApp.dataSource.getRepository(ProjectSecretApiKey).count();
      const response = await post(body);
      expect([response.status, response.body]).toEqual([400, expected]);
      expect(await testApp.dataSource.getRepository(ProjectSecretApiKey).count()).toBe(before);
    });

    it('refuses a label already used in the project, on create and on rename, but not in another project', async () => {
      await createKey(owner.api, owner.projectId, 'Taken');
      const other = await createKey(owner.api, owner.projectId, 'Free');
      const duplicate = validationError(
        'invalid',
        "Project secret API key with label 'Taken' already exists.",
        'label',
      );
      const created = await post({ label: 'Taken', scopes: READ_FLAGS });
      expect([created.status, created.body]).toEqual([400, duplicate]);
      const renamed = await owner.api.patch(keysPath(owner.projectId, `${other.id}/`), { label: 'Taken' });
      expect([renamed.status, renamed.body]).toEqual([400, duplicate]);
      const elsewhere = await testApp.createOwner(email('elsewhere'));
      await createKey(elsewhere.api, elsewhere.projectId, 'Taken');
    });

    it('refuses scopes a secret key cannot have on update too', async () => {
      const key = await createKey(owner.api, owner.projectId, 'Scoped');
      const response = await owner.api.patch(keysPath(owner.projectId, `${key.id}/`), { scopes: ['*'] });
      expect(response.status).toBe(400);
      expect(response.body.attr).toBe('scopes');
      const row = await testApp.dataSource.getRepository(ProjectSecretApiKey).findOneByOrFail({ id: key.id });
      expect(row.scopes).toEqual(READ_FLAGS);
    });

    it('refuses a 51st key in a project', async () => {
      const full = await testApp.createOwner(email('full'));
      for (let index = 0; index < 50; index += 1) await createKey(full.api, full.projectId, `Key ${index}`);
      const response = await full.api.post(keysPath(full.projectId), {
        label: 'One too many',
        scopes: READ_FLAGS,
      });
      expect([response.status, response.body]).toEqual([
        400,
        validationError(
          'invalid_input',
          'You can only have 50 project secret API keys. Remove an existing key before creating a new one.',
          null,
        ),
      ]);
    });
  });

  describe('access', () => {
    it('is for project admins: a member is refused every route, an admin is let through', async () => {
      const key = await createKey(owner.api, owner.projectId, 'Guarded');
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);
      const calls: [string, string, unknown?][] = [
        ['GET', keysPath(owner.projectId)],
        ['POST', keysPath(owner.projectId), { label: 'By a member', scopes: READ_FLAGS }],
        ['GET', keysPath(owner.projectId, `${key.id}/`)],
        ['PATCH', keysPath(owner.projectId, `${key.id}/`), { label: 'By a member' }],
        ['POST', keysPath(owner.projectId, `${key.id}/roll/`)],
        ['DELETE', keysPath(owner.projectId, `${key.id}/`)],
      ];
      for (const [method, path, body] of calls) {
        const response = await member.api.request(method, path, { body });
        expect({ call: `${method} ${path}`, status: response.status, body: response.body }).toEqual({
          call: `${method} ${path}`,
          status: 403,
          body: INSUFFICIENT_LEVEL,
        });
      }
      const row = await testApp.dataSource.getRepository(ProjectSecretApiKey).findOneByOrFail({ id: key.id });
      expect(row.secureValue).toBe(sha256(key.value));

      const created = await admin.api.post(keysPath(owner.projectId), {
        label: 'By an admin',
        scopes: READ_FLAGS,
      });
      expect(created.status).toBe(201);
      expect((await admin.api.get(keysPath(owner.projectId, `${key.id}/`))).status).toBe(200);
    });

    it('needs project:read to read and project:write to write, from a personal key', async () => {
      const key = await createKey(owner.api, owner.projectId, 'Scoped access');
      const reader = testApp.client(`Bearer ${await testApp.createKey(owner.user.email, ['project:read'])}`);
      const flagsOnly = testApp.client(
        `Bearer ${await testApp.createKey(owner.user.email, ['feature_flag:write'])}`,
      );
      expect((await reader.get(keysPath(owner.projectId))).status).toBe(200);
      expect((await reader.get(keysPath(owner.projectId, `${key.id}/`))).status).toBe(200);
      for (const response of [
        await reader.post(keysPath(owner.projectId), { label: 'By a reader', scopes: READ_FLAGS }),
        await reader.post(keysPath(owner.projectId, `${key.id}/roll/`)),
        await reader.delete(keysPath(owner.projectId, `${key.id}/`)),
      ]) {
        expect([response.status, response.body.detail]).toEqual([
          403,
          "API key missing required scope 'project:write'",
        ]);
      }
      const refused = await flagsOnly.get(keysPath(owner.projectId));
      expect([refused.status, refused.body.detail]).toEqual([
        403,
        "API key missing required scope 'project:read'",
      ]);
    });

    it("answers 404 for another organization's project, and the same 404 for another project's key as for an unknown id", async () => {
      const stranger = await testApp.createOwner(email('stranger'));
      const theirs = await createKey(stranger.api, stranger.projectId, 'Theirs');
      const outside = await owner.api.get(keysPath(stranger.projectId));
      expect([outside.status, outside.body.detail]).toEqual([404, 'Project not found.']);
      expect(JSON.stringify(outside.body)).not.toContain(theirs.id);

      // The owner's own project, naming the stranger's key id: as unknown as a made-up id.
      const calls: [string, string, unknown?][] = [
        ['GET', `${theirs.id}/`],
        ['PATCH', `${theirs.id}/`, { label: 'Hijacked' }],
        ['PUT', `${theirs.id}/`, { label: 'Hijacked', scopes: READ_FLAGS }],
        ['POST', `${theirs.id}/roll/`],
        ['DELETE', `${theirs.id}/`],
        ['GET', 'no-such-key/'],
        ['DELETE', 'no-such-key/'],
      ];
      for (const [method, suffix, body] of calls) {
        const response = await owner.api.request(method, keysPath(owner.projectId, suffix), { body });
        expect({ call: `${method} ${suffix}`, status: response.status, body: response.body }).toEqual({
          call: `${method} ${suffix}`,
          status: 404,
          body: NOT_FOUND,
        });
      }
      const row = await testApp.dataSource
        .getRepository(ProjectSecretApiKey)
        .findOneByOrFail({ id: theirs.id });
      expect([row.label, row.secureValue]).toEqual(['Theirs', sha256(theirs.value)]);
    });

    it('refuses a phs_ key as a bearer credential of the management API (401, as an unknown personal key)', async () => {
      const key = await createKey(owner.api, owner.projectId, 'Not a personal key');
      const client = testApp.client(`Bearer ${key.value}`);
      for (const path of [
        '/api/users/@me/',
        `/api/projects/${owner.projectId}/`,
        `/api/projects/${owner.projectId}/feature_flags/`,
        `/api/projects/${owner.projectId}/feature_flags/local_evaluation/`,
        keysPath(owner.projectId),
      ]) {
        const response = await client.get(path);
        expect({ path, status: response.status, body: response.body }).toEqual({
          path,
          status: 401,
          body: {
            type: 'authentication_error',
            code: 'authentication_failed',
            detail: 'Personal API key found in request Authorization header is invalid.',
            attr: null,
          },
        });
      }
      const row = await testApp.dataSource.getRepository(ProjectSecretApiKey).findOneByOrFail({ id: key.id });
      expect(row.lastUsedAt).toBeNull();
    });
  });
});
