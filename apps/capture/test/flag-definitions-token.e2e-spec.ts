import { randomUUID } from 'node:crypto';
import {
  FLAGS_ORGANIZATION_ID,
  FLAGS_PERSONAL_API_KEY,
  FLAGS_PROJECT_TOKEN,
  startFlagsTestApp,
  type FlagsTestApp,
} from './flags-test-app';

const OTHER_PROJECT_TOKEN = 'phc_flags_other_project_token';

/**
 * Where a local-evaluation request may name its project: `?token=` (posthog-node, posthog-python),
 * `?api_key=` (PostHog's get_token reads it too), or the `X-PostHog-Project-Api-Key` header that
 * posthog-rs sends with its personal key instead of a query parameter.
 */
describe('the project API key of the local-evaluation endpoints, in the query or in a header', () => {
  let app: FlagsTestApp;

  beforeAll(async () => {
    app = await startFlagsTestApp();
    const { rows } = await app.pool.query<{ id: number }>(
      `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Other', $3) RETURNING id`,
      [randomUUID(), FLAGS_ORGANIZATION_ID, OTHER_PROJECT_TOKEN],
    );
    for (const [teamId, key] of [
      [app.teamId, 'own-flag'],
      [rows[0].id, 'other-flag'],
    ] as const) {
      await app.pool.query(
        `INSERT INTO feature_flags (team_id, key, name, filters, active) VALUES ($1, $2::text, $2::text, $3, true)`,
        [teamId, key, { groups: [{ properties: [], rollout_percentage: 100 }] }],
      );
    }
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  async function definitions(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; etag: string | null; body: any }> {
    const response = await fetch(`${app.baseUrl}${path}`, {
      headers: { Authorization: `Bearer ${FLAGS_PERSONAL_API_KEY}`, ...headers },
    });
    const text = await response.text();
    return {
      status: response.status,
      etag: response.headers.get('etag'),
      body: text ? JSON.parse(text) : null,
    };
  }

  const flagKeys = (body: { flags: { key: string }[] }) => body.flags.map((flag) => flag.key);

  it.each(['/flags/definitions/?send_cohorts', '/api/feature_flag/local_evaluation/?send_cohorts'])(
    'serves %s to a personal key with the project API key in X-PostHog-Project-Api-Key, as with ?token=',
    async (path) => {
      const byHeader = await definitions(path, { 'X-PostHog-Project-Api-Key': FLAGS_PROJECT_TOKEN });
      const byQuery = await definitions(`${path}&token=${FLAGS_PROJECT_TOKEN}`);
      expect(byHeader.status).toBe(200);
      expect(flagKeys(byHeader.body)).toEqual(['own-flag']);
      expect(byHeader).toEqual(byQuery);
    },
  );

  it('takes ?api_key= as PostHog does', async () => {
    const answer = await definitions(`/flags/definitions?api_key=${OTHER_PROJECT_TOKEN}`);
    expect(answer.status).toBe(200);
    expect(flagKeys(answer.body)).toEqual(['other-flag']);
  });

  it('answers 304 to the ETag it gave, whichever place named the project', async () => {
    const { etag } = await definitions(`/flags/definitions?token=${FLAGS_PROJECT_TOKEN}`);
    const again = await definitions('/flags/definitions', {
      'X-PostHog-Project-Api-Key': FLAGS_PROJECT_TOKEN,
      'If-None-Match': etag!,
    });
    expect([again.status, again.body]).toEqual([304, null]);
  });

  it('lets the query decide when the query and the header name different projects, as PostHog (it never reads the header)', async () => {
    const queryWins = await definitions(`/flags/definitions?token=${OTHER_PROJECT_TOKEN}`, {
      'X-PostHog-Project-Api-Key': FLAGS_PROJECT_TOKEN,
    });
    expect(flagKeys(queryWins.body)).toEqual(['other-flag']);
    const unknownInQuery = await definitions('/flags/definitions?token=phc_nobody', {
      'X-PostHog-Project-Api-Key': FLAGS_PROJECT_TOKEN,
    });
    expect(unknownInQuery.status).toBe(401);
  });

  it('answers 401 to a header naming no project, as to such a query', async () => {
    const answer = await definitions('/flags/definitions', { 'X-PostHog-Project-Api-Key': 'phc_nobody' });
    expect(answer).toMatchObject({ status: 401, body: { code: 'invalid_api_key', attr: null } });
  });

  it('answers 400 naming both places when neither names a project', async () => {
    for (const headers of [{}, { 'X-PostHog-Project-Api-Key': '  ' }] as Record<string, string>[]) {
      const answer = await definitions('/flags/definitions?token=', headers);
      expect(answer).toEqual({
        status: 400,
        etag: null,
        body: {
          type: 'validation_error',
          code: 'required',
          detail:
            'The project API key is required: the token query parameter or the X-PostHog-Project-Api-Key header.',
          attr: 'token',
        },
      });
    }
  });
});
