import { randomUUID } from 'node:crypto';
import { MembershipLevel, OrganizationMembership, Team, User } from '@hogbase/postgres';
import { ApiClient, ManagementTestApp, startManagementTestApp } from './management-test-app';
import { UUID_PATTERN as UUID, ISO_8601_PATTERN as ISO_8601 } from '@hogbase/test-support';
import { NOT_FOUND, INSUFFICIENT_LEVEL, validationError } from './expected-bodies';

describe('organizations', () => {
  let testApp: ManagementTestApp;
  let emailCounter = 0;
  /** A fresh e-mail per call, so every test owns its users and organizations. */
  const email = (label: string) => `${label}-${++emailCounter}@organizations.test`;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
  });

  afterAll(async () => {
    await testApp?.close();
  });

  const ids = (body: { results: { id: string }[] }) =>
    body.results.map((organization) => organization.id).sort();

  describe('list', () => {
    it('lists only the organizations the caller belongs to, with and without the trailing slash', async () => {
      const owner = await testApp.createOwner(email('owner'), 'Listed organization');
      const outsider = await testApp.createOwner(email('outsider'), 'Hidden organization');
      const joined = await testApp.createOwner(email('other-owner'), 'Joined organization');
      await testApp.createMember(owner.user.email, joined.organizationId, MembershipLevel.Member);

      for (const path of ['/api/organizations', '/api/organizations/']) {
        const response = await owner.api.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ count: 2, next: null, previous: null, results: expect.any(Array) });
        expect(ids(response.body)).toEqual([owner.organizationId, joined.organizationId].sort());
        expect(JSON.stringify(response.body)).not.toContain(outsider.organizationId);
      }
    });

    it("reports the caller's own level in each organization", async () => {
      const owner = await testApp.createOwner(email('owner'));
      const other = await testApp.createOwner(email('other'));
      await testApp.createMember(owner.user.email, other.organizationId, MembershipLevel.Admin);

      const { body } = await owner.api.get('/api/organizations/');
      const levels = Object.fromEntries(
        body.results.map((organization: { id: string; membership_level: number }) => [
          organization.id,
          organization.membership_level,
        ]),
      );
      expect(levels).toEqual({
        [owner.organizationId]: MembershipLevel.Owner,
        [other.organizationId]: MembershipLevel.Admin,
      });
    });

    it('lists only the organizations a key is scoped to', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const second = await owner.api.post('/api/organizations/', { name: 'Second organization' });
      expect(second.status).toBe(201);
      const scopedKey = await testApp.createKey(owner.user.email, ['organization:read'], {
        organizations: [second.body.id],
      });

      const response = await testApp.client(`Bearer ${scopedKey}`).get('/api/organizations/');
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(1);
      expect(ids(response.body)).toEqual([second.body.id]);
    });

    it('lists only the organizations of the projects a key is scoped to, each with only those projects', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const unscoped = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
        name: 'Not in the key',
      });
      const second = await owner.api.post('/api/organizations/', { name: 'Second organization' });
      expect([unscoped.status, second.status]).toEqual([201, 201]);
      const scopedKey = await testApp.createKey(owner.user.email, ['organization:read'], {
        projects: [owner.projectId],
      });

      const response = await testApp.client(`Bearer ${scopedKey}`).get('/api/organizations/');
      expect(response.body.count).toBe(1);
      expect(ids(response.body)).toEqual([owner.organizationId]);
      expect(response.body.results[0].teams.map((team: { id: number }) => team.id)).toEqual([
        owner.projectId,
      ]);
      expect(JSON.stringify(response.body)).not.toContain(unscoped.body.api_token);
      expect(JSON.stringify(response.body)).not.toContain(second.body.id);
    });
  });

  describe('pagination', () => {
    let api: ApiClient;
    let allIds: string[];

    /** One user who belongs to five organizations. */
    beforeAll(async () => {
      const owner = await testApp.createOwner(email('paginated'), 'Page 1');
      api = owner.api;
      for (const name of ['Page 2', 'Page 3', 'Page 4', 'Page 5']) {
        expect((await api.post('/api/organizations/', { name })).status).toBe(201);
      }
      const { body } = await api.get('/api/organizations/');
      expect(body.count).toBe(5);
      allIds = ids(body);
    });

    const url = (query: string) => `${testApp.baseUrl}/api/organizations/?${query}`;

    it('pages with limit and offset, with absolute next and previous links', async () => {
      const first = await api.get('/api/organizations/?limit=2');
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ count: 5, next: url('limit=2&offset=2'), previous: null });
      expect(first.body.results).toHaveLength(2);

      const second = await api.get('/api/organizations/?limit=2&offset=2');
      // DRF drops `offset` from `previous` when it would be 0 or less.
      expect(second.body).toMatchObject({
        count: 5,
        next: url('limit=2&offset=4'),
        previous: url('limit=2'),
      });
      expect(second.body.results).toHaveLength(2);

      const third = await api.get('/api/organizations/?limit=2&offset=4');
      expect(third.body).toMatchObject({ count: 5, next: null, previous: url('limit=2&offset=2') });
      expect(third.body.results).toHaveLength(1);

      const seen = [...first.body.results, ...second.body.results, ...third.body.results].map(
        (organization: { id: string }) => organization.id,
      );
      expect(seen.sort()).toEqual(allIds);
    });

    it('drops offset from previous when offset minus limit is negative', async () => {
      const response = await api.get('/api/organizations/?limit=3&offset=1');
      expect(response.body).toMatchObject({
        count: 5,
        next: url('limit=3&offset=4'),
        previous: url('limit=3'),
      });
      expect(response.body.results).toHaveLength(3);
    });

    it('answers an empty page with the right count and no next link for an offset past the end', async () => {
      const response = await api.get('/api/organizations/?limit=2&offset=10');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ count: 5, next: null, previous: url('limit=2&offset=8'), results: [] });
    });

    it.each(['0', '-1', 'abc', '2.5', ''])(
      'falls back to the default page size of 100 for limit=%p',
      async (limit) => {
        const response = await api.get(`/api/organizations/?limit=${limit}`);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ count: 5, next: null, previous: null });
        expect(response.body.results).toHaveLength(5);
      },
    );

    it('uses the default page size in the links when limit is invalid', async () => {
      const response = await api.get('/api/organizations/?limit=-5&offset=3');
      expect(response.body).toMatchObject({ count: 5, next: null, previous: url('limit=100') });
      expect(response.body.results).toHaveLength(2);
    });

    it.each(['-1', 'abc'])('reads offset=%p as 0', async (offset) => {
      const response = await api.get(`/api/organizations/?limit=2&offset=${offset}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ count: 5, previous: null, next: url('limit=2&offset=2') });
      expect(response.body.results).toHaveLength(2);
    });

    it('accepts a huge limit and returns everything on one page', async () => {
      for (const limit of ['1000000', '99999999999999999999']) {
        const response = await api.get(`/api/organizations/?limit=${limit}`);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ count: 5, next: null, previous: null });
        expect(response.body.results).toHaveLength(5);
      }
    });

    it('keeps the path the client used (without the trailing slash) in the links', async () => {
      const response = await api.get('/api/organizations?limit=4');
      expect(response.body.next).toBe(`${testApp.baseUrl}/api/organizations?limit=4&offset=4`);
    });
  });

  describe('create', () => {
    it('creates an organization with an owner membership, a default project and a slug', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const response = await owner.api.post('/api/organizations/', { name: 'Acme Analytics' });

      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'Acme Analytics',
        slug: expect.stringMatching(/^acme-analytics(-[a-z]{4})?$/),
        created_at: expect.stringMatching(ISO_8601),
        updated_at: expect.stringMatching(ISO_8601),
        membership_level: MembershipLevel.Owner,
        // INSTALL: its admins install their own apps; ROOT (global apps) only from the admin CLI.
        plugins_access_level: 6,
        teams: [expect.objectContaining({ name: 'Default project', organization: response.body.id })],
        available_product_features: [],
        is_member_join_email_enabled: true,
        metadata: expect.any(String),
        customer_id: null,
        enforce_2fa: null,
        member_count: '1',
      });
      expect(response.body.id).not.toBe(owner.organizationId);

      const fetched = await owner.api.get(`/api/organizations/${response.body.id}/`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(response.body);
    });

    it('makes the new organization and its project the current ones of the creator', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const created = await owner.api.post('/api/organizations/', { name: 'Now current' });

      const current = await owner.api.get('/api/organizations/@current/');
      expect(current.status).toBe(200);
      expect(current.body.id).toBe(created.body.id);
      const project = await owner.api.get('/api/projects/@current/');
      expect(project.body.id).toBe(created.body.teams[0].id);
    });

    it('answers on the path without the trailing slash too', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const response = await owner.api.post('/api/organizations', { name: 'No slash' });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe('No slash');
    });

    it('stores is_member_join_email_enabled and enforce_2fa when given', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const response = await owner.api.post('/api/organizations/', {
        name: 'Strict organization',
        is_member_join_email_enabled: false,
        enforce_2fa: true,
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ is_member_join_email_enabled: false, enforce_2fa: true });
      const fetched = await owner.api.get(`/api/organizations/${response.body.id}/`);
      expect(fetched.body).toMatchObject({ is_member_join_email_enabled: false, enforce_2fa: true });
    });

    it('ignores read-only fields sent in the request', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const forgedId = randomUUID();
      const response = await owner.api.post('/api/organizations/', {
        name: 'Read-only fields',
        id: forgedId,
        slug: 'my-own-slug',
        membership_level: MembershipLevel.Member,
        plugins_access_level: 9,
        member_count: '1000',
        customer_id: 'cus_forged',
        created_at: '2001-01-01T00:00:00Z',
        available_product_features: [{ key: 'sso', name: 'SSO' }],
        teams: [{ name: 'forged' }],
        metadata: 'forged',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        slug: expect.stringMatching(/^read-only-fields(-[a-z]{4})?$/),
        membership_level: MembershipLevel.Owner,
        plugins_access_level: 6,
        member_count: '1',
        customer_id: null,
        available_product_features: [],
      });
      expect(response.body.id).not.toBe(forgedId);
      expect(response.body.created_at.startsWith('2001')).toBe(false);
      expect(response.body.metadata).not.toBe('forged');
      expect(response.body.teams.map((team: { name: string }) => team.name)).toEqual(['Default project']);
      expect((await owner.api.get(`/api/organizations/${forgedId}/`)).status).toBe(404);
    });

    it('trims surrounding whitespace from the name, as DRF does', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const response = await owner.api.post('/api/organizations/', { name: '  Padded name  ' });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe('Padded name');
    });

    it("reads DRF's boolean spellings and a numeric name as PostHog does", async () => {
      const owner = await testApp.createOwner(email('creator'));
      const response = await owner.api.post('/api/organizations/', {
        name: 2024,
        is_member_join_email_enabled: 'no',
        enforce_2fa: 'true',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        name: '2024',
        is_member_join_email_enabled: false,
        enforce_2fa: true,
      });

      const patched = await owner.api.patch(`/api/organizations/${response.body.id}/`, {
        is_member_join_email_enabled: 1,
        enforce_2fa: '',
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ is_member_join_email_enabled: true, enforce_2fa: null });
    });

    it('accepts a name of exactly 64 characters', async () => {
      const owner = await testApp.createOwner(email('creator'));
      const name = 'n'.repeat(64);
      const response = await owner.api.post('/api/organizations/', { name });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe(name);
    });
  });

  describe('create with a restricted key', () => {
    it.each([
      ['organizations', (owner: { organizationId: string }) => ({ organizations: [owner.organizationId] })],
      ['projects', (owner: { projectId: number }) => ({ projects: [owner.projectId] })],
    ])('answers 403 to a key scoped to %s and creates nothing', async (_kind, scopeOf) => {
      const owner = await testApp.createOwner(email('owner'));
      const key = await testApp.createKey(owner.user.email, ['organization:write'], scopeOf(owner));
      const before = await testApp.dataSource
        .getRepository(OrganizationMembership)
        .countBy({ userId: owner.user.id });

      const response = await testApp.client(`Bearer ${key}`).post('/api/organizations/', { name: 'Refused' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: 'API keys scoped to organizations or projects cannot create organizations.',
          attr: null,
        },
      });
      expect(
        await testApp.dataSource.getRepository(OrganizationMembership).countBy({ userId: owner.user.id }),
      ).toBe(before);
    });
  });

  describe('create validation', () => {
    let api: ApiClient;
    let ownerUserId: number;

    beforeAll(async () => {
      const owner = await testApp.createOwner(email('validator'));
      api = owner.api;
      ownerUserId = owner.user.id;
    });

    const membershipCount = () =>
      testApp.dataSource.getRepository(OrganizationMembership).countBy({ userId: ownerUserId });

    it.each<[string, unknown, ReturnType<typeof validationError>]>([
      ['a missing name', {}, validationError('required', 'This field is required.', 'name')],
      [
        'a missing name next to other fields',
        { enforce_2fa: true },
        validationError('required', 'This field is required.', 'name'),
      ],
      ['a null name', { name: null }, validationError('null', 'This field may not be null.', 'name')],
      ['an empty name', { name: '' }, validationError('blank', 'This field may not be blank.', 'name')],
      [
        'a name of only spaces',
        { name: '   ' },
        validationError('blank', 'This field may not be blank.', 'name'),
      ],
      [
        'a name over 64 characters',
        { name: 'x'.repeat(65) },
        validationError('max_length', 'Ensure this field has no more than 64 characters.', 'name'),
      ],
      ['a boolean name', { name: true }, validationError('invalid_input', 'Not a valid string.', 'name')],
      [
        'an object name',
        { name: { text: 'Acme' } },
        validationError('invalid_input', 'Not a valid string.', 'name'),
      ],
      ['a list name', { name: ['Acme'] }, validationError('invalid_input', 'Not a valid string.', 'name')],
      [
        'a non-boolean is_member_join_email_enabled',
        { name: 'Acme', is_member_join_email_enabled: 'maybe' },
        validationError('invalid_input', 'Must be a valid boolean.', 'is_member_join_email_enabled'),
      ],
      [
        'a null is_member_join_email_enabled',
        { name: 'Acme', is_member_join_email_enabled: null },
        validationError('null', 'This field may not be null.', 'is_member_join_email_enabled'),
      ],
      [
        'an object enforce_2fa',
        { name: 'Acme', enforce_2fa: { on: true } },
        validationError('invalid_input', 'Must be a valid boolean.', 'enforce_2fa'),
      ],
      [
        'a non-boolean enforce_2fa',
        { name: 'Acme', enforce_2fa: 'sometimes' },
        validationError('invalid_input', 'Must be a valid boolean.', 'enforce_2fa'),
      ],
    ])('answers 400 for %s and creates nothing', async (_case, body, expected) => {
      const before = await membershipCount();
      const response = await api.post('/api/organizations/', body);
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: expected });
      expect(await membershipCount()).toBe(before);
    });

    it('answers 400 for a body that is a JSON array', async () => {
      const response = await api.post('/api/organizations/', [{ name: 'Acme' }]);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: validationError('invalid_input', 'Invalid data. Expected a dictionary, but got list.', null),
      });
    });

    it('answers 400 parse_error for a body that is not valid JSON', async () => {
      const response = await api.request('POST', '/api/organizations/', { rawBody: '{"name": "Acme",' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        // NOTE: the detail is whatever the JSON parser said (DRF's is `JSON parse error - <reason>`).
        body: { type: 'invalid_request', code: 'parse_error', detail: expect.any(String), attr: null },
      });
    });

    it('accepts enforce_2fa null', async () => {
      const response = await api.post('/api/organizations/', { name: 'Null 2FA', enforce_2fa: null });
      expect(response.status).toBe(201);
      expect(response.body.enforce_2fa).toBeNull();
    });
  });

  describe('slug', () => {
    it('slugifies the name: lowercase, accents stripped, punctuation dropped, spaces to dashes', async () => {
      const owner = await testApp.createOwner(email('slugger'));
      const response = await owner.api.post('/api/organizations/', {
        name: `Café Ünïcode & Co.! ${emailCounter}`,
      });
      expect(response.status).toBe(201);
      expect(response.body.slug).toBe(`cafe-unicode-co-${emailCounter}`);
    });

    it('gives a colliding name a random 4-letter suffix', async () => {
      const owner = await testApp.createOwner(email('slugger'));
      const name = `Twin Company ${emailCounter}`;
      const first = await owner.api.post('/api/organizations/', { name });
      const second = await owner.api.post('/api/organizations/', { name });
      const third = await owner.api.post('/api/organizations/', { name });
      expect([first.status, second.status, third.status]).toEqual([201, 201, 201]);

      const base = `twin-company-${emailCounter}`;
      expect(first.body.slug).toBe(base);
      expect(second.body.slug).toMatch(new RegExp(`^${base}-[a-z]{4}$`));
      expect(third.body.slug).toMatch(new RegExp(`^${base}-[a-z]{4}$`));
      expect(new Set([first.body.slug, second.body.slug, third.body.slug]).size).toBe(3);
    });

    it('cuts the slug to 48 characters, and to 43 plus the suffix on a collision', async () => {
      const owner = await testApp.createOwner(email('slugger'));
      const name = `${emailCounter}-${'long'.repeat(15)}`.slice(0, 64);
      const first = await owner.api.post('/api/organizations/', { name });
      const second = await owner.api.post('/api/organizations/', { name });
      expect(first.body.slug).toBe(name.toLowerCase().slice(0, 48));
      expect(second.body.slug).toMatch(new RegExp(`^${name.toLowerCase().slice(0, 43)}-[a-z]{4}$`));
    });

    it('keeps the slug when the organization is renamed', async () => {
      const owner = await testApp.createOwner(email('slugger'), `Before rename ${emailCounter}`);
      const before = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
      const renamed = await owner.api.patch(`/api/organizations/${owner.organizationId}/`, {
        name: 'After rename',
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body.name).toBe('After rename');
      expect(renamed.body.slug).toBe(before.body.slug);
    });
  });

  describe('retrieve', () => {
    it('returns every field of the interface with its type', async () => {
      const owner = await testApp.createOwner(email('typed'), 'Typed organization');
      await testApp.createMember(email('typed-member'), owner.organizationId, MembershipLevel.Member);
      const { status, body } = await owner.api.get(`/api/organizations/${owner.organizationId}/`);

      expect(status).toBe(200);
      expect(Object.keys(body).sort()).toEqual(
        [
          'id',
          'name',
          'slug',
          'created_at',
          'updated_at',
          'membership_level',
          'plugins_access_level',
          'teams',
          'available_product_features',
          'is_member_join_email_enabled',
          'metadata',
          'customer_id',
          'enforce_2fa',
          'member_count',
        ].sort(),
      );
      expect(body.id).toMatch(UUID);
      expect(body.id).toBe(owner.organizationId);
      expect(body.name).toBe('Typed organization');
      expect(typeof body.slug).toBe('string');
      expect(body.created_at).toMatch(ISO_8601);
      expect(body.updated_at).toMatch(ISO_8601);
      expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
      expect(Number.isInteger(body.membership_level)).toBe(true);
      expect(Number.isInteger(body.plugins_access_level)).toBe(true);
      expect(Array.isArray(body.teams)).toBe(true);
      for (const team of body.teams) expect(team).toEqual(expect.any(Object));
      expect(Array.isArray(body.available_product_features)).toBe(true);
      expect(typeof body.is_member_join_email_enabled).toBe('boolean');
      expect(typeof body.metadata).toBe('string');
      expect(JSON.parse(body.metadata)).toEqual({ instance_tag: expect.any(String) });
      expect(body.customer_id === null || typeof body.customer_id === 'string').toBe(true);
      expect(body.enforce_2fa === null || typeof body.enforce_2fa === 'boolean').toBe(true);
      expect(body.member_count).toBe('2');
    });

    it('embeds the projects as teams with their basic fields', async () => {
      const owner = await testApp.createOwner(email('teams'));
      const { body } = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
      expect(body.teams).toEqual([
        {
          id: owner.projectId,
          uuid: expect.stringMatching(UUID),
          organization: owner.organizationId,
          api_token: owner.projectApiKey,
          name: 'Default project',
          completed_snippet_onboarding: false,
          ingested_event: false,
          is_demo: false,
          timezone: 'UTC',
          access_control: false,
        },
      ]);
    });

    it('counts only active users in member_count', async () => {
      const owner = await testApp.createOwner(email('counted'));
      const member = await testApp.createMember(
        email('counted-member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      await testApp.createMember(email('counted-admin'), owner.organizationId, MembershipLevel.Admin);
      expect((await owner.api.get(`/api/organizations/${owner.organizationId}/`)).body.member_count).toBe(
        '3',
      );

      await testApp.dataSource.getRepository(User).update({ id: member.user.id }, { isActive: false });
      expect((await owner.api.get(`/api/organizations/${owner.organizationId}/`)).body.member_count).toBe(
        '2',
      );
    });

    it('resolves @current to the current organization, with and without the trailing slash', async () => {
      const owner = await testApp.createOwner(email('current'));
      for (const path of ['/api/organizations/@current', '/api/organizations/@current/']) {
        const response = await owner.api.get(path);
        expect(response.status).toBe(200);
        expect(response.body.id).toBe(owner.organizationId);
      }
      const byId = await owner.api.get(`/api/organizations/${owner.organizationId}`);
      expect(byId.status).toBe(200);
      expect(byId.body.id).toBe(owner.organizationId);
    });

    it("answers 404 for another organization's id, identical to an unknown id", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const other = await testApp.createOwner(email('victim'), 'Secret organization');

      const foreign = await owner.api.get(`/api/organizations/${other.organizationId}/`);
      const unknown = await owner.api.get(`/api/organizations/${randomUUID()}/`);
      const malformed = await owner.api.get('/api/organizations/not-a-uuid/');
      expect({ status: foreign.status, body: foreign.body }).toEqual({ status: 404, body: NOT_FOUND });
      expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 404, body: NOT_FOUND });
      expect({ status: malformed.status, body: malformed.body }).toEqual({ status: 404, body: NOT_FOUND });
    });

    it("answers 404 to PATCH and DELETE of another organization's id, identical to an unknown id, and changes nothing", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const other = await testApp.createOwner(email('victim'), 'Untouched organization');

      for (const id of [other.organizationId, randomUUID()]) {
        const patched = await owner.api.patch(`/api/organizations/${id}/`, { name: 'Hijacked' });
        expect({ status: patched.status, body: patched.body }).toEqual({ status: 404, body: NOT_FOUND });
        const deleted = await owner.api.delete(`/api/organizations/${id}/`);
        expect({ status: deleted.status, body: deleted.body }).toEqual({ status: 404, body: NOT_FOUND });
      }
      const untouched = await other.api.get(`/api/organizations/${other.organizationId}/`);
      expect(untouched.status).toBe(200);
      expect(untouched.body.name).toBe('Untouched organization');
    });
  });

  describe('update', () => {
    it('lets an admin rename the organization and change its settings', async () => {
      const owner = await testApp.createOwner(email('owner'), 'Old name');
      const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);
      const before = await owner.api.get(`/api/organizations/${owner.organizationId}/`);

      const response = await admin.api.patch(`/api/organizations/${owner.organizationId}/`, {
        name: 'New name',
        is_member_join_email_enabled: false,
        enforce_2fa: true,
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: owner.organizationId,
        name: 'New name',
        is_member_join_email_enabled: false,
        enforce_2fa: true,
        membership_level: MembershipLevel.Admin,
        created_at: before.body.created_at,
      });
      expect(Date.parse(response.body.updated_at)).toBeGreaterThan(Date.parse(before.body.updated_at));

      const fetched = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
      expect(fetched.body).toMatchObject({
        name: 'New name',
        is_member_join_email_enabled: false,
        enforce_2fa: true,
      });
    });

    it('changes only the fields sent', async () => {
      const owner = await testApp.createOwner(email('owner'), 'Partial');
      await owner.api.patch(`/api/organizations/${owner.organizationId}/`, { enforce_2fa: true });
      const response = await owner.api.patch(`/api/organizations/${owner.organizationId}`, {
        is_member_join_email_enabled: false,
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        name: 'Partial',
        enforce_2fa: true,
        is_member_join_email_enabled: false,
      });
    });

    it('lets enforce_2fa go back to null', async () => {
      const owner = await testApp.createOwner(email('owner'));
      await owner.api.patch(`/api/organizations/${owner.organizationId}/`, { enforce_2fa: true });
      const response = await owner.api.patch(`/api/organizations/${owner.organizationId}/`, {
        enforce_2fa: null,
      });
      expect(response.status).toBe(200);
      expect(response.body.enforce_2fa).toBeNull();
    });

    it('updates @current', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.patch('/api/organizations/@current/', { name: 'Renamed current' });
      expect(response.status).toBe(200);
      expect(response.body.id).toBe(owner.organizationId);
      expect(response.body.name).toBe('Renamed current');
    });

    it('ignores read-only fields sent in a PATCH', async () => {
      const owner = await testApp.createOwner(email('owner'), `Read-only patch ${emailCounter}`);
      const before = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
      const response = await owner.api.patch(`/api/organizations/${owner.organizationId}/`, {
        id: randomUUID(),
        slug: 'forged-slug',
        membership_level: MembershipLevel.Member,
        plugins_access_level: 9,
        member_count: '99',
        customer_id: 'cus_forged',
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(
        expect.objectContaining({ ...before.body, updated_at: expect.any(String) }),
      );
    });

    it('answers 403 to a member and leaves the organization as it was', async () => {
      const owner = await testApp.createOwner(email('owner'), 'Unchanged by member');
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );

      const response = await member.api.patch(`/api/organizations/${owner.organizationId}/`, {
        name: 'Member rename',
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: INSUFFICIENT_LEVEL,
      });
      expect((await owner.api.get(`/api/organizations/${owner.organizationId}/`)).body.name).toBe(
        'Unchanged by member',
      );
    });

    it.each<[string, unknown, ReturnType<typeof validationError>]>([
      ['a blank name', { name: '' }, validationError('blank', 'This field may not be blank.', 'name')],
      [
        'a name of only spaces',
        { name: '  ' },
        validationError('blank', 'This field may not be blank.', 'name'),
      ],
      ['a null name', { name: null }, validationError('null', 'This field may not be null.', 'name')],
      [
        'a name over 64 characters',
        { name: 'y'.repeat(65) },
        validationError('max_length', 'Ensure this field has no more than 64 characters.', 'name'),
      ],
      [
        'a numeric-looking object name',
        { name: { value: 1 } },
        validationError('invalid_input', 'Not a valid string.', 'name'),
      ],
      [
        'a string is_member_join_email_enabled',
        { is_member_join_email_enabled: 'nope' },
        validationError('invalid_input', 'Must be a valid boolean.', 'is_member_join_email_enabled'),
      ],
      [
        'a null is_member_join_email_enabled',
        { is_member_join_email_enabled: null },
        validationError('null', 'This field may not be null.', 'is_member_join_email_enabled'),
      ],
      [
        'a list enforce_2fa',
        { enforce_2fa: [true] },
        validationError('invalid_input', 'Must be a valid boolean.', 'enforce_2fa'),
      ],
    ])('answers 400 to a PATCH with %s and changes nothing', async (_case, body, expected) => {
      const owner = await testApp.createOwner(email('owner'), 'Validated patch');
      const response = await owner.api.patch(`/api/organizations/${owner.organizationId}/`, body);
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: expected });
      const fetched = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
      expect(fetched.body).toMatchObject({
        name: 'Validated patch',
        is_member_join_email_enabled: true,
        enforce_2fa: null,
      });
    });

    it('answers 400 to a PATCH whose body is an array or not JSON', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const list = await owner.api.patch(`/api/organizations/${owner.organizationId}/`, [{ name: 'x' }]);
      expect({ status: list.status, body: list.body }).toEqual({
        status: 400,
        body: validationError('invalid_input', 'Invalid data. Expected a dictionary, but got list.', null),
      });
      const broken = await owner.api.request('PATCH', `/api/organizations/${owner.organizationId}/`, {
        rawBody: 'name=x',
      });
      expect(broken.status).toBe(400);
      expect(broken.body).toMatchObject({ type: 'invalid_request', code: 'parse_error', attr: null });
    });
  });

  describe('delete', () => {
    it('answers 403 to an admin and to a member, and keeps the organization', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );

      for (const caller of [admin, member]) {
        const response = await caller.api.delete(`/api/organizations/${owner.organizationId}/`);
        expect({ status: response.status, body: response.body }).toEqual({
          status: 403,
          body: INSUFFICIENT_LEVEL,
        });
      }
      expect((await owner.api.get(`/api/organizations/${owner.organizationId}/`)).status).toBe(200);
    });

    it('lets the owner delete it, with its projects and memberships', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const extraProject = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
        name: 'Second project',
      });
      expect(extraProject.status).toBe(201);

      const response = await owner.api.delete(`/api/organizations/${owner.organizationId}/`);
      expect(response.status).toBe(204);
      expect(response.body).toBeNull();

      expect((await owner.api.get(`/api/organizations/${owner.organizationId}/`)).body).toEqual(NOT_FOUND);
      for (const projectId of [owner.projectId, extraProject.body.id]) {
        const project = await owner.api.get(`/api/projects/${projectId}/`);
        expect(project.status).toBe(404);
      }
      expect(
        await testApp.dataSource.getRepository(Team).countBy({ organizationId: owner.organizationId }),
      ).toBe(0);
      expect(
        await testApp.dataSource
          .getRepository(OrganizationMembership)
          .countBy({ organizationId: owner.organizationId }),
      ).toBe(0);
      expect((await member.api.get('/api/organizations/')).body.count).toBe(0);
      expect((await owner.api.get('/api/projects/')).body.count).toBe(0);
    });

    it("moves the owner's current organization to one that remains", async () => {
      const owner = await testApp.createOwner(email('owner'), 'Remaining');
      const doomed = await owner.api.post('/api/organizations/', { name: 'Doomed' });
      expect((await owner.api.get('/api/organizations/@current/')).body.id).toBe(doomed.body.id);

      expect((await owner.api.delete('/api/organizations/@current/')).status).toBe(204);
      const current = await owner.api.get('/api/organizations/@current/');
      expect(current.status).toBe(200);
      expect(current.body.id).toBe(owner.organizationId);
      expect((await owner.api.get('/api/projects/@current/')).body.id).toBe(owner.projectId);
    });

    it('answers 404 to a second delete', async () => {
      const owner = await testApp.createOwner(email('owner'));
      expect((await owner.api.delete(`/api/organizations/${owner.organizationId}`)).status).toBe(204);
      const again = await owner.api.delete(`/api/organizations/${owner.organizationId}/`);
      expect({ status: again.status, body: again.body }).toEqual({ status: 404, body: NOT_FOUND });
    });
  });
});
