import { setTimeout as sleep } from 'node:timers/promises';
import type { PostHog, PostHogOptions } from 'posthog-node';
import { eventuallyPasses } from '@hogbase/test-support';
import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';
import { createFeatureFlags, managementRequest } from './management-request';

/**
 * posthog-node pointed at the capture port of `npm start`, on what the SDK itself stored through
 * capture: person properties set by identify and `$set`, group properties set by groupIdentify.
 * The flags are evaluated without the SDK sending those properties, so the answers can only come
 * from the persons and groups ingestion wrote. And local evaluation with a personal API key: what
 * it cannot decide falls back to `/flags`, and a change made over the management API reaches the
 * SDK's definitions poll (If-None-Match, 304 until something changed).
 *
 * flags-posthog-node.e2e-spec.ts covers the SDK calls on properties the SDK sends, split mode, and
 * the local/remote parity; this file does not repeat them.
 */

const FLAGS: Record<string, unknown>[] = [
  {
    key: 'paid-plan',
    filters: {
      groups: [
        {
          properties: [{ key: 'plan', value: ['pro', 'enterprise'], operator: 'exact', type: 'person' }],
          rollout_percentage: 100,
        },
      ],
      payloads: { true: '{"seats": 10}' },
    },
  },
  {
    key: 'pricing-test',
    filters: {
      groups: [
        {
          properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }],
          rollout_percentage: 100,
        },
      ],
      multivariate: {
        variants: [
          { key: 'monthly', rollout_percentage: 50 },
          { key: 'annual', rollout_percentage: 50 },
        ],
      },
      payloads: { monthly: '{"period": "month"}', annual: '{"period": "year", "discount": 20}' },
    },
  },
  {
    key: 'large-accounts',
    filters: {
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [
            { key: 'employees', value: '100', operator: 'gte', type: 'group', group_type_index: 0 },
          ],
          rollout_percentage: 100,
        },
      ],
    },
  },
  {
    key: 'new-editor',
    filters: { groups: [{ properties: [], rollout_percentage: 0 }], payloads: { true: '"v2"' } },
  },
];

const PRICING_PAYLOADS: Record<string, unknown> = {
  monthly: { period: 'month' },
  annual: { period: 'year', discount: 20 },
};

async function sdk(
  captureUrl: string,
  credentials: InitialCredentials,
  options: PostHogOptions = {},
): Promise<PostHog> {
  const { PostHog: Client } = await import('posthog-node');
  return new Client(credentials.project_api_key, {
    host: captureUrl,
    flushAt: 1,
    fetchRetryCount: 0,
    ...options,
  });
}

/** How long an answer that depends on what was just stored may take to change. */
const SETTLING = { timeoutMs: 10_000, intervalMs: 200 };

describe('posthog-node flags on persons and groups stored through capture (npm start)', () => {
  const options = { sendFeatureFlagEvents: false };
  let standalone: StandaloneForTest | undefined;
  let captureUrl: string;
  let managementUrl: string;
  let credentials: InitialCredentials;
  let client: PostHog;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-flags-sdk-test-', { LOG_LEVEL: 'warn' });
    ({ managementUrl, captureUrl, credentials } = standalone);
    await createFeatureFlags(managementUrl, credentials, FLAGS);
    client = await sdk(captureUrl, credentials);
    // getFeatureFlag and friends warn once that they are deprecated; not under test.
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await client?.shutdown();
    jest.restoreAllMocks();
    if (standalone) expect(await standalone.stop()).toEqual({ code: 0, signal: null });
  });

  it('answers from the properties identify stored, without the SDK sending them', async () => {
    client.identify({ distinctId: 'stored-alice', properties: { plan: 'pro', email: 'alice@acme.com' } });
    client.identify({ distinctId: 'stored-bob', properties: { plan: 'free', email: 'bob@example.org' } });
    // In npm start a 200 from capture means the person is stored.
    await client.flush();

    await eventuallyPasses(
      async () => expect(await client.isFeatureEnabled('paid-plan', 'stored-alice', options)).toBe(true),
      SETTLING,
    );
    expect(await client.isFeatureEnabled('paid-plan', 'stored-bob', options)).toBe(false);
    expect(await client.getFeatureFlagPayload('paid-plan', 'stored-alice', undefined, options)).toEqual({
      seats: 10,
    });
    const variant = await client.getFeatureFlag('pricing-test', 'stored-alice', options);
    expect(['monthly', 'annual']).toContain(variant);
    expect(await client.getFeatureFlagPayload('pricing-test', 'stored-alice', undefined, options)).toEqual(
      PRICING_PAYLOADS[variant as string],
    );
    expect(await client.getFeatureFlag('pricing-test', 'stored-bob', options)).toBe(false);
    expect(await client.getAllFlags('stored-alice')).toEqual(
      expect.objectContaining({ 'paid-plan': true, 'pricing-test': variant, 'new-editor': false }),
    );
    expect(await client.getAllFlagsAndPayloads('stored-alice')).toEqual(
      expect.objectContaining({
        featureFlagPayloads: expect.objectContaining({
          'paid-plan': { seats: 10 },
          'pricing-test': PRICING_PAYLOADS[variant as string],
        }),
      }),
    );
    // What the SDK sends wins over what is stored, for this call only.
    expect(
      await client.isFeatureEnabled('paid-plan', 'stored-bob', {
        personProperties: { plan: 'pro' },
        ...options,
      }),
    ).toBe(true);
    expect(await client.isFeatureEnabled('paid-plan', 'stored-bob', options)).toBe(false);
  });

  it('follows a $set sent on a later event', async () => {
    client.capture({
      distinctId: 'stored-bob',
      event: 'upgraded',
      properties: { $set: { plan: 'enterprise' } },
    });
    await client.flush();
    expect(await client.isFeatureEnabled('paid-plan', 'stored-bob', options)).toBe(true);
  });

  it('reads the group properties groupIdentify stored for a group flag', async () => {
    client.groupIdentify({ groupType: 'company', groupKey: 'acme-corp', properties: { employees: 500 } });
    client.groupIdentify({ groupType: 'company', groupKey: 'tiny-shop', properties: { employees: 3 } });
    await client.flush();
    const acme = { groups: { company: 'acme-corp' }, ...options };
    // The first groupIdentify creates the group type; definitions are cached for a couple of seconds.
    await eventuallyPasses(
      async () => expect(await client.isFeatureEnabled('large-accounts', 'stored-alice', acme)).toBe(true),
      SETTLING,
    );
    expect(
      await client.isFeatureEnabled('large-accounts', 'stored-alice', {
        groups: { company: 'tiny-shop' },
        ...options,
      }),
    ).toBe(false);
    expect(await client.isFeatureEnabled('large-accounts', 'stored-alice', options)).toBe(false);
    expect(await client.getAllFlags('stored-bob', { groups: { company: 'acme-corp' } })).toEqual(
      expect.objectContaining({ 'large-accounts': true, 'paid-plan': true }),
    );
  });

  it('evaluates locally with a personal API key, falls back to /flags, and picks up a PATCH on its next poll', async () => {
    const definitionStatuses: number[] = [];
    const local = await sdk(captureUrl, credentials, {
      personalApiKey: credentials.personal_api_key,
      featureFlagsPollingInterval: 300,
      // The real fetch; only the definitions polls' statuses are noted.
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (url.includes('/flags/definitions')) definitionStatuses.push(response.status);
        return response;
      },
    });
    try {
      expect(await local.waitForLocalEvaluationReady(10_000)).toBe(true);
      const locally = { onlyEvaluateLocally: true, ...options };
      // Stored properties are not in the definitions: locally undecided, then asked of /flags.
      expect(await local.getFeatureFlag('paid-plan', 'stored-alice', locally)).toBeUndefined();
      expect(await local.getFeatureFlag('paid-plan', 'stored-alice', options)).toBe(true);
      const carol = { personProperties: { plan: 'enterprise', email: 'carol@acme.com' }, ...locally };
      expect(await local.isFeatureEnabled('paid-plan', 'carol', carol)).toBe(true);
      expect(await local.getFeatureFlagPayload('paid-plan', 'carol', undefined, carol)).toEqual({
        seats: 10,
      });
      const variant = await local.getFeatureFlag('pricing-test', 'carol', carol);
      expect(['monthly', 'annual']).toContain(variant);
      expect(await local.getFeatureFlagPayload('pricing-test', 'carol', undefined, carol)).toEqual(
        PRICING_PAYLOADS[variant as string],
      );
      // The same answer /flags gives for the same properties.
      expect(
        await client.getFeatureFlag('pricing-test', 'carol', {
          personProperties: carol.personProperties,
          ...options,
        }),
      ).toBe(variant);
      expect(await local.getFeatureFlag('new-editor', 'carol', locally)).toBe(false);

      // Unchanged definitions: the polls are answered 304.
      await sleep(1_500);
      expect(definitionStatuses).toContain(304);
      const list = await managementRequest<{ results: { id: number; key: string }[] }>(
        managementUrl,
        credentials.personal_api_key,
        'GET',
        `/api/projects/${credentials.project_id}/feature_flags/?search=new-editor`,
      );
      const flag = list.body.results.find((result) => result.key === 'new-editor')!;
      const polledBefore = definitionStatuses.length;
      const patched = await managementRequest(
        managementUrl,
        credentials.personal_api_key,
        'PATCH',
        `/api/projects/${credentials.project_id}/feature_flags/${flag.id}/`,
        { filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '"v2"' } } },
      );
      expect(patched.status).toBe(200);
      await eventuallyPasses(
        async () => expect(await local.getFeatureFlag('new-editor', 'carol', locally)).toBe(true),
        SETTLING,
      );
      expect(await local.getFeatureFlagPayload('new-editor', 'carol', undefined, locally)).toBe('v2');
      expect(definitionStatuses.slice(polledBefore)).toContain(200);
    } finally {
      await local.shutdown();
    }
  }, 60_000);
});
