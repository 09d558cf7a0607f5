import { randomUUID } from 'node:crypto';
import { MembershipLevel, Team, User } from '@hogbase/postgres';
import { ManagementTestApp, startManagementTestApp } from './management-test-app';
import { UUID_PATTERN as UUID, ISO_8601_PATTERN as ISO_8601 } from '@hogbase/test-support';
import { NOT_FOUND, INSUFFICIENT_LEVEL, validationError } from './expected-bodies';

const PROJECT_API_TOKEN = /^phc_[0-9A-Za-z]{20,}$/;

const PROJECT_NOT_FOUND = {
  type: 'invalid_request',
  code: 'not_found',
  detail: 'Project not found.',
  attr: null,
};

describe('projects', () => {
  let testApp: ManagementTestApp;
  let emailCounter = 0;
  const email = (label: string) => `${label}-${++emailCounter}@projects.test`;

  beforeAll(async () => {
    testApp = await startManagementTestApp();
  });

  afterAll(async () => {
    await testApp?.close();
  });

  const projectIds = (body: { results: { id: number }[] }) =>
    body.results.map((project) => project.id).sort((a, b) => a - b);
  const teamCount = (organizationId: string) =>
    testApp.dataSource.getRepository(Team).countBy({ organizationId });
  /** Points the user's "current" organization (what POST /api/projects/ creates in) at another one. */
  const makeCurrent = (userId: number, organizationId: string | null) =>
    testApp.dataSource.getRepository(User).update({ id: userId }, { currentOrganizationId: organizationId });

  describe('list', () => {
    it("lists the projects of every organization the caller belongs to, and no one else's", async () => {
      const owner = await testApp.createOwner(email('owner'));
      const other = await testApp.createOwner(email('other'));
      const outsider = await testApp.createOwner(email('outsider'));
      await testApp.createMember(owner.user.email, other.organizationId, MembershipLevel.Member);

      for (const path of ['/api/projects', '/api/projects/']) {
        const response = await owner.api.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ count: 2, next: null, previous: null });
        expect(projectIds(response.body)).toEqual([owner.projectId, other.projectId].sort((a, b) => a - b));
        expect(JSON.stringify(response.body)).not.toContain(outsider.projectApiKey);
      }
    });

    it('returns each project with its basic fields and a phc_ API token', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const { body } = await owner.api.get('/api/projects/');
      expect(body.results).toHaveLength(1);
      expect(body.results[0]).toMatchObject({
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
      });
      expect(body.results[0].api_token).toMatch(PROJECT_API_TOKEN);
    });

    it('lists only the projects a key is scoped to', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const second = await owner.api.post('/api/projects/', { name: 'Second' });
      const third = await owner.api.post('/api/projects/', { name: 'Third' });
      expect([second.status, third.status]).toEqual([201, 201]);
      const key = await testApp.createKey(owner.user.email, ['project:read'], {
        projects: [second.body.id, third.body.id],
      });

      const response = await testApp.client(`Bearer ${key}`).get('/api/projects/');
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(2);
      expect(projectIds(response.body)).toEqual([second.body.id, third.body.id].sort((a, b) => a - b));
    });

    it('lists only the projects of the organizations a key is scoped to', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const otherOrganization = await owner.api.post('/api/organizations/', { name: 'Other organization' });
      expect(otherOrganization.status).toBe(201);
      const key = await testApp.createKey(owner.user.email, ['project:read'], {
        organizations: [owner.organizationId],
      });

      const response = await testApp.client(`Bearer ${key}`).get('/api/projects/');
      expect(response.body.count).toBe(1);
      expect(projectIds(response.body)).toEqual([owner.projectId]);
    });

    it('paginates with DRF links', async () => {
      const owner = await testApp.createOwner(email('owner'));
      for (const name of ['P2', 'P3'])
        expect((await owner.api.post('/api/projects/', { name })).status).toBe(201);

      const first = await owner.api.get('/api/projects/?limit=2');
      expect(first.body).toMatchObject({
        count: 3,
        previous: null,
        next: `${testApp.baseUrl}/api/projects/?limit=2&offset=2`,
      });
      expect(first.body.results).toHaveLength(2);
      const second = await owner.api.get('/api/projects/?limit=2&offset=2');
      expect(second.body).toMatchObject({
        count: 3,
        next: null,
        previous: `${testApp.baseUrl}/api/projects/?limit=2`,
      });
      expect(second.body.results).toHaveLength(1);
      const past = await owner.api.get('/api/projects/?limit=2&offset=50');
      expect(past.body).toMatchObject({ count: 3, next: null, results: [] });
    });
  });

  describe('create in the current organization', () => {
    it('creates a project with a phc_ token in the current organization', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.post('/api/projects/', { name: 'Web app', timezone: 'Europe/Berlin' });

      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: expect.any(Number),
        uuid: expect.stringMatching(UUID),
        organization: owner.organizationId,
        api_token: expect.stringMatching(PROJECT_API_TOKEN),
        name: 'Web app',
        completed_snippet_onboarding: false,
        ingested_event: false,
        is_demo: false,
        timezone: 'Europe/Berlin',
        access_control: false,
        created_at: expect.stringMatching(ISO_8601),
        updated_at: expect.stringMatching(ISO_8601),
        app_urls: [],
        anonymize_ips: false,
        inject_web_apps: false,
        autocapture_opt_out: false,
        autocapture_exceptions_opt_in: false,
        autocapture_web_vitals_opt_in: false,
        autocapture_web_vitals_allowed_metrics: null,
        capture_performance_opt_in: true,
        capture_console_log_opt_in: true,
        capture_dead_clicks: false,
        heatmaps_opt_in: false,
        session_recording_opt_in: false,
        effective_membership_level: MembershipLevel.Owner,
      });
      expect(Number.isInteger(response.body.id)).toBe(true);
      expect(response.body.api_token).not.toBe(owner.projectApiKey);

      const fetched = await owner.api.get(`/api/projects/${response.body.id}/`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(response.body);
    });

    it('defaults the timezone to UTC and answers on the path without the trailing slash', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.post('/api/projects', { name: 'No slash' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        name: 'No slash',
        timezone: 'UTC',
        organization: owner.organizationId,
      });
    });

    it('stores the optional settings sent', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.post('/api/projects/', {
        name: 'Configured',
        app_urls: ['https://example.com'],
        anonymize_ips: true,
        inject_web_apps: true,
        completed_snippet_onboarding: true,
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        app_urls: ['https://example.com'],
        anonymize_ips: true,
        inject_web_apps: true,
        completed_snippet_onboarding: true,
      });
    });

    it("reads DRF's boolean spellings as PostHog does", async () => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.post('/api/projects/', {
        name: 'Spelled',
        anonymize_ips: 'yes',
        is_demo: 'false',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ anonymize_ips: true, is_demo: false });
    });

    it('ignores read-only fields sent in the request', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const other = await testApp.createOwner(email('other'));
      const response = await owner.api.post('/api/projects/', {
        name: 'Read-only',
        id: 424242,
        uuid: randomUUID(),
        api_token: 'phc_chosen_by_client',
        organization: other.organizationId,
        ingested_event: true,
        access_control: true,
        effective_membership_level: MembershipLevel.Member,
      });
      expect(response.status).toBe(201);
      expect(response.body.id).not.toBe(424242);
      expect(response.body).toMatchObject({
        organization: owner.organizationId,
        ingested_event: false,
        access_control: false,
        effective_membership_level: MembershipLevel.Owner,
      });
      expect(response.body.api_token).not.toBe('phc_chosen_by_client');
      expect(response.body.api_token).toMatch(PROJECT_API_TOKEN);
      expect(await teamCount(other.organizationId)).toBe(1);
    });

    it('lets an admin of the current organization create a project', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);
      const response = await admin.api.post('/api/projects/', { name: 'By admin' });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        organization: owner.organizationId,
        effective_membership_level: MembershipLevel.Admin,
      });
    });

    it('answers 403 to a plain member of the current organization and creates nothing', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const response = await member.api.post('/api/projects/', { name: 'By member' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: INSUFFICIENT_LEVEL,
      });
      expect(await teamCount(owner.organizationId)).toBe(1);
    });

    it('checks the level in the current organization, not in the others the caller owns', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const host = await testApp.createOwner(email('host'));
      await testApp.createMember(owner.user.email, host.organizationId, MembershipLevel.Member);
      await makeCurrent(owner.user.id, host.organizationId);

      const refused = await owner.api.post('/api/projects/', { name: 'Refused' });
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 403,
        body: INSUFFICIENT_LEVEL,
      });
      expect(await teamCount(host.organizationId)).toBe(1);
      expect(await teamCount(owner.organizationId)).toBe(1);

      await makeCurrent(owner.user.id, owner.organizationId);
      const created = await owner.api.post('/api/projects/', { name: 'Accepted' });
      expect(created.status).toBe(201);
      expect(created.body.organization).toBe(owner.organizationId);
    });

    it('answers 403 to a key scoped to another organization than the current one', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const second = await owner.api.post('/api/organizations/', { name: 'Second' });
      // The new organization is now current; the key may act only in the first one.
      const key = await testApp.createKey(owner.user.email, ['project:write'], {
        organizations: [owner.organizationId],
      });
      const response = await testApp.client(`Bearer ${key}`).post('/api/projects/', { name: 'Sneaky' });
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ type: 'authentication_error', code: 'permission_denied' });
      expect(await teamCount(second.body.id)).toBe(1);
    });

    it('answers 403 to a key scoped to projects and creates nothing, on both create routes', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const key = await testApp.createKey(owner.user.email, ['project:write'], {
        projects: [owner.projectId],
      });
      const client = testApp.client(`Bearer ${key}`);

      for (const path of ['/api/projects/', `/api/organizations/${owner.organizationId}/projects/`]) {
        const response = await client.post(path, { name: 'Refused' });
        expect({ path, status: response.status, detail: response.body.detail }).toEqual({
          path,
          status: 403,
          detail: 'API keys scoped to projects cannot create projects.',
        });
      }
      expect(await teamCount(owner.organizationId)).toBe(1);
    });

    it('answers 404 when the caller has no current organization', async () => {
      const owner = await testApp.createOwner(email('owner'));
      await makeCurrent(owner.user.id, null);
      const response = await owner.api.post('/api/projects/', { name: 'Homeless' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 404,
        body: { ...NOT_FOUND, detail: 'Organization not found.' },
      });
    });
  });

  describe('create validation', () => {
    it.each<[string, unknown, ReturnType<typeof validationError>]>([
      ['a missing name', {}, validationError('required', 'This field is required.', 'name')],
      ['a null name', { name: null }, validationError('null', 'This field may not be null.', 'name')],
      ['an empty name', { name: '' }, validationError('blank', 'This field may not be blank.', 'name')],
      [
        'a name of only spaces',
        { name: '   ' },
        validationError('blank', 'This field may not be blank.', 'name'),
      ],
      [
        'a name over 200 characters',
        { name: 'p'.repeat(201) },
        validationError('max_length', 'Ensure this field has no more than 200 characters.', 'name'),
      ],
      ['a list name', { name: ['Web'] }, validationError('invalid_input', 'Not a valid string.', 'name')],
      [
        'an unknown timezone',
        { name: 'Web', timezone: 'Mars/Olympus' },
        validationError('invalid_choice', '"Mars/Olympus" is not a valid choice.', 'timezone'),
      ],
      [
        'a null timezone',
        { name: 'Web', timezone: null },
        validationError('null', 'This field may not be null.', 'timezone'),
      ],
      [
        'a non-boolean anonymize_ips',
        { name: 'Web', anonymize_ips: 'perhaps' },
        validationError('invalid_input', 'Must be a valid boolean.', 'anonymize_ips'),
      ],
      [
        'app_urls that is not a list',
        { name: 'Web', app_urls: 'https://example.com' },
        validationError('invalid_input', 'Expected a list of items.', 'app_urls'),
      ],
    ])('answers 400 for %s and creates nothing', async (_case, body, expected) => {
      const owner = await testApp.createOwner(email('validator'));
      const response = await owner.api.post('/api/projects/', body);
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: expected });
      expect(await teamCount(owner.organizationId)).toBe(1);
    });

    it('answers 400 for a body that is a list', async () => {
      const owner = await testApp.createOwner(email('validator'));
      const response = await owner.api.post('/api/projects/', [{ name: 'Web' }]);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: validationError('invalid_input', 'Invalid data. Expected a dictionary, but got list.', null),
      });
    });

    it('trims surrounding whitespace from the name', async () => {
      const owner = await testApp.createOwner(email('validator'));
      const response = await owner.api.post('/api/projects/', { name: '  Spaced  ' });
      expect(response.status).toBe(201);
      expect(response.body.name).toBe('Spaced');
    });
  });

  describe('retrieve', () => {
    it('returns the project by id and as @current, with and without the trailing slash', async () => {
      const owner = await testApp.createOwner(email('owner'));
      for (const path of [
        `/api/projects/${owner.projectId}`,
        `/api/projects/${owner.projectId}/`,
        '/api/projects/@current/',
      ]) {
        const response = await owner.api.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({
          id: owner.projectId,
          api_token: owner.projectApiKey,
          organization: owner.organizationId,
        });
      }
    });

    it("answers 404 'Project not found.' for another organization's project, an unknown id and a non-numeric id alike", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const victim = await testApp.createOwner(email('victim'));
      for (const id of [
        String(victim.projectId),
        '999999',
        'abc',
        '1.5',
        '-1',
        `${owner.projectId}abc`,
        '99999999999999999999',
      ]) {
        const response = await owner.api.get(`/api/projects/${id}/`);
        expect({ id, status: response.status, body: response.body }).toEqual({
          id,
          status: 404,
          body: PROJECT_NOT_FOUND,
        });
      }
    });

    it('answers 403 to a key scoped to other projects', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const second = await owner.api.post('/api/projects/', { name: 'Second' });
      const key = await testApp.createKey(owner.user.email, ['project:read'], { projects: [second.body.id] });
      const client = testApp.client(`Bearer ${key}`);

      expect((await client.get(`/api/projects/${second.body.id}/`)).status).toBe(200);
      const refused = await client.get(`/api/projects/${owner.projectId}/`);
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 403,
        body: {
          type: 'authentication_error',
          code: 'permission_denied',
          detail: `API key does not have access to the requested project: ID ${owner.projectId}.`,
          attr: null,
        },
      });
    });

    it('answers a key scoped to projects 404, not 403, for a project of an organization its user is not in', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const stranger = await testApp.createOwner(email('stranger'));
      const key = await testApp.createKey(owner.user.email, ['project:read'], {
        projects: [owner.projectId],
      });

      const response = await testApp.client(`Bearer ${key}`).get(`/api/projects/${stranger.projectId}/`);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 404,
        body: PROJECT_NOT_FOUND,
      });
    });
  });

  describe('update', () => {
    it('lets a plain member rename a project and change its timezone', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const before = await owner.api.get(`/api/projects/${owner.projectId}/`);

      const response = await member.api.patch(`/api/projects/${owner.projectId}/`, {
        name: 'Renamed',
        timezone: 'America/New_York',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: owner.projectId,
        name: 'Renamed',
        timezone: 'America/New_York',
        api_token: owner.projectApiKey,
        effective_membership_level: MembershipLevel.Member,
      });
      expect(Date.parse(response.body.updated_at)).toBeGreaterThan(Date.parse(before.body.updated_at));
      expect((await owner.api.get(`/api/projects/${owner.projectId}`)).body).toMatchObject({
        name: 'Renamed',
        timezone: 'America/New_York',
      });
    });

    it('changes the settings the SDKs remote config is built from, and validates them', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const settings = {
        autocapture_opt_out: true,
        autocapture_exceptions_opt_in: true,
        autocapture_web_vitals_opt_in: true,
        autocapture_web_vitals_allowed_metrics: ['LCP', 'INP'],
        capture_performance_opt_in: false,
        capture_console_log_opt_in: false,
        capture_dead_clicks: true,
        heatmaps_opt_in: true,
      };
      const response = await owner.api.patch(`/api/projects/${owner.projectId}/`, settings);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ ...settings, session_recording_opt_in: false });
      expect((await owner.api.get(`/api/projects/${owner.projectId}/`)).body).toMatchObject(settings);

      const cleared = await owner.api.patch(`/api/projects/${owner.projectId}/`, {
        autocapture_web_vitals_allowed_metrics: null,
      });
      expect(cleared.body).toMatchObject({
        autocapture_web_vitals_allowed_metrics: null,
        heatmaps_opt_in: true,
      });

      for (const [body, attr, detail] of [
        [{ autocapture_opt_out: 'maybe' }, 'autocapture_opt_out', 'Must be a valid boolean.'],
        [
          { autocapture_web_vitals_allowed_metrics: ['LCP', 'TTFB'] },
          'autocapture_web_vitals_allowed_metrics',
          '"TTFB" is not a valid choice.',
        ],
        [
          { autocapture_web_vitals_allowed_metrics: 'LCP' },
          'autocapture_web_vitals_allowed_metrics',
          'Expected a list of items.',
        ],
      ] as const) {
        const refused = await owner.api.patch(`/api/projects/${owner.projectId}/`, body);
        expect({ body, status: refused.status }).toEqual({ body, status: 400 });
        expect(refused.body).toMatchObject({ type: 'validation_error', attr, detail });
      }
    });

    it('ignores read-only fields such as api_token and organization', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const other = await testApp.createOwner(email('other'));
      const response = await owner.api.patch(`/api/projects/${owner.projectId}/`, {
        api_token: 'phc_forged',
        organization: other.organizationId,
        id: 1,
        ingested_event: true,
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: owner.projectId,
        api_token: owner.projectApiKey,
        organization: owner.organizationId,
        ingested_event: false,
      });
    });

    it.each<[string, unknown, ReturnType<typeof validationError>]>([
      ['a blank name', { name: '' }, validationError('blank', 'This field may not be blank.', 'name')],
      ['a null name', { name: null }, validationError('null', 'This field may not be null.', 'name')],
      [
        'an unknown timezone',
        { timezone: 'Not/AZone' },
        validationError('invalid_choice', '"Not/AZone" is not a valid choice.', 'timezone'),
      ],
      [
        'a numeric timezone',
        { timezone: 5 },
        validationError('invalid_choice', '"5" is not a valid choice.', 'timezone'),
      ],
      [
        'a null timezone',
        { timezone: null },
        validationError('null', 'This field may not be null.', 'timezone'),
      ],
      [
        'a null anonymize_ips',
        { anonymize_ips: null },
        validationError('null', 'This field may not be null.', 'anonymize_ips'),
      ],
      [
        'a null app_urls',
        { app_urls: null },
        validationError('null', 'This field may not be null.', 'app_urls'),
      ],
      [
        'a null completed_snippet_onboarding',
        { completed_snippet_onboarding: null },
        validationError('null', 'This field may not be null.', 'completed_snippet_onboarding'),
      ],
    ])('answers 400 to a PATCH with %s and changes nothing', async (_case, body, expected) => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.patch(`/api/projects/${owner.projectId}/`, body);
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: expected });
      expect((await owner.api.get(`/api/projects/${owner.projectId}/`)).body).toMatchObject({
        name: 'Default project',
        timezone: 'UTC',
      });
    });

    it("answers 404 to a PATCH of another organization's project and changes nothing", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const victim = await testApp.createOwner(email('victim'));
      const response = await owner.api.patch(`/api/projects/${victim.projectId}/`, { name: 'Hijacked' });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 404,
        body: PROJECT_NOT_FOUND,
      });
      expect((await victim.api.get(`/api/projects/${victim.projectId}/`)).body.name).toBe('Default project');
    });
  });

  describe('reset_token', () => {
    it('gives the project a new phc_ token, for an admin', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);

      const response = await admin.api.patch(`/api/projects/${owner.projectId}/reset_token/`);
      expect(response.status).toBe(200);
      expect(response.body.id).toBe(owner.projectId);
      expect(response.body.api_token).toMatch(PROJECT_API_TOKEN);
      expect(response.body.api_token).not.toBe(owner.projectApiKey);
      expect((await owner.api.get(`/api/projects/${owner.projectId}/`)).body.api_token).toBe(
        response.body.api_token,
      );

      const again = await owner.api.patch(`/api/projects/${owner.projectId}/reset_token`);
      expect(again.status).toBe(200);
      expect(again.body.api_token).toMatch(PROJECT_API_TOKEN);
      expect(again.body.api_token).not.toBe(response.body.api_token);
    });

    it('answers 403 to a plain member and keeps the token', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const response = await member.api.patch(`/api/projects/${owner.projectId}/reset_token/`);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: INSUFFICIENT_LEVEL,
      });
      expect((await owner.api.get(`/api/projects/${owner.projectId}/`)).body.api_token).toBe(
        owner.projectApiKey,
      );
    });

    it("answers 404 for another organization's project", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const victim = await testApp.createOwner(email('victim'));
      const response = await owner.api.patch(`/api/projects/${victim.projectId}/reset_token/`);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 404,
        body: PROJECT_NOT_FOUND,
      });
      expect((await victim.api.get(`/api/projects/${victim.projectId}/`)).body.api_token).toBe(
        victim.projectApiKey,
      );
    });
  });

  describe('delete', () => {
    it('answers 403 to a plain member and keeps the project', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const response = await member.api.delete(`/api/projects/${owner.projectId}/`);
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: INSUFFICIENT_LEVEL,
      });
      expect((await owner.api.get(`/api/projects/${owner.projectId}/`)).status).toBe(200);
    });

    it('lets an admin delete a project, which is then gone', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const admin = await testApp.createMember(email('admin'), owner.organizationId, MembershipLevel.Admin);
      const second = await owner.api.post('/api/projects/', { name: 'Doomed' });

      const response = await admin.api.delete(`/api/projects/${second.body.id}/`);
      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      const gone = await owner.api.get(`/api/projects/${second.body.id}/`);
      expect({ status: gone.status, body: gone.body }).toEqual({ status: 404, body: PROJECT_NOT_FOUND });
      expect(projectIds((await owner.api.get('/api/projects/')).body)).toEqual([owner.projectId]);
      const organization = await owner.api.get(`/api/organizations/${owner.organizationId}/`);
      expect(organization.body.teams.map((team: { id: number }) => team.id)).toEqual([owner.projectId]);
    });

    it('moves the current project of its users to another project of the organization', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const doomed = await owner.api.post('/api/projects/', { name: 'Current and doomed' });
      await testApp.dataSource
        .getRepository(User)
        .update({ id: owner.user.id }, { currentTeamId: doomed.body.id });
      expect((await owner.api.get('/api/projects/@current/')).body.id).toBe(doomed.body.id);

      expect((await owner.api.delete('/api/projects/@current')).status).toBe(204);
      const current = await owner.api.get('/api/projects/@current/');
      expect(current.status).toBe(200);
      expect(current.body.id).toBe(owner.projectId);
    });

    it("answers 404 for another organization's project and a non-numeric id", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const victim = await testApp.createOwner(email('victim'));
      for (const id of [String(victim.projectId), 'abc']) {
        const response = await owner.api.delete(`/api/projects/${id}/`);
        expect({ status: response.status, body: response.body }).toEqual({
          status: 404,
          body: PROJECT_NOT_FOUND,
        });
      }
      expect((await victim.api.get(`/api/projects/${victim.projectId}/`)).status).toBe(200);
    });
  });

  describe('organization projects', () => {
    it("lists only that organization's projects", async () => {
      const owner = await testApp.createOwner(email('owner'));
      const second = await owner.api.post('/api/organizations/', { name: 'Second organization' });
      const extra = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
        name: 'Extra',
      });
      expect(extra.status).toBe(201);

      for (const path of [
        `/api/organizations/${owner.organizationId}/projects/`,
        `/api/organizations/${owner.organizationId}/projects`,
      ]) {
        const response = await owner.api.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ count: 2, next: null, previous: null });
        expect(projectIds(response.body)).toEqual([owner.projectId, extra.body.id].sort((a, b) => a - b));
      }
      const other = await owner.api.get(`/api/organizations/${second.body.id}/projects/`);
      expect(projectIds(other.body)).toEqual([second.body.teams[0].id]);
      const current = await owner.api.get('/api/organizations/@current/projects/');
      expect(projectIds(current.body)).toEqual([second.body.teams[0].id]);
    });

    it('creates in the named organization even when another one is current', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const second = await owner.api.post('/api/organizations/', { name: 'Now current' });
      expect((await owner.api.get('/api/organizations/@current/')).body.id).toBe(second.body.id);

      const response = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
        name: 'In the first',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        organization: owner.organizationId,
        name: 'In the first',
        api_token: expect.stringMatching(PROJECT_API_TOKEN),
      });
      expect(await teamCount(owner.organizationId)).toBe(2);
      expect(await teamCount(second.body.id)).toBe(1);
    });

    it('answers 403 to a plain member and creates nothing', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const member = await testApp.createMember(
        email('member'),
        owner.organizationId,
        MembershipLevel.Member,
      );
      const response = await member.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
        name: 'Nope',
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: INSUFFICIENT_LEVEL,
      });
      expect(await teamCount(owner.organizationId)).toBe(1);
      // A member may still list them.
      expect((await member.api.get(`/api/organizations/${owner.organizationId}/projects/`)).body.count).toBe(
        1,
      );
    });

    it("answers 404 for another organization's id and an unknown id alike", async () => {
      const owner = await testApp.createOwner(email('prober'));
      const victim = await testApp.createOwner(email('victim'));
      for (const id of [victim.organizationId, randomUUID(), 'not-a-uuid']) {
        const listed = await owner.api.get(`/api/organizations/${id}/projects/`);
        expect({ status: listed.status, body: listed.body }).toEqual({ status: 404, body: NOT_FOUND });
        const created = await owner.api.post(`/api/organizations/${id}/projects/`, { name: 'Planted' });
        expect({ status: created.status, body: created.body }).toEqual({ status: 404, body: NOT_FOUND });
      }
      expect(await teamCount(victim.organizationId)).toBe(1);
    });

    it('validates the body as the project route does', async () => {
      const owner = await testApp.createOwner(email('owner'));
      const response = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
        name: 'Web',
        timezone: 'Moon/Base',
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: validationError('invalid_choice', '"Moon/Base" is not a valid choice.', 'timezone'),
      });
    });
  });
});
