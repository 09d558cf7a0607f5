import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PostHog } from 'posthog-node';
import { createTestDatabase, runProcess, type TestDatabase } from '@hogbase/test-support';
import {
  BIN_DIR,
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  startApp,
  startStandaloneForTest,
  stopApp,
  waitForReady,
  type AppProcess,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';
import { createFeatureFlags, managementRequest } from './management-request';
import { SDK_TEST_FLAGS, sdkTestPeople } from './sdk-test-flags.fixture';

/**
 * The real posthog-node SDK pointed at the capture address alone: flags created over the
 * management API are evaluated remotely (`/flags`) and locally (definitions from
 * `/flags/definitions` with a personal key), in `npm start` mode and in split mode.
 */

const FLAGS = SDK_TEST_FLAGS;

async function sdk(captureUrl: string, credentials: InitialCredentials, local: boolean): Promise<PostHog> {
  const { PostHog: Client } = await import('posthog-node');
  return new Client(credentials.project_api_key, {
    host: captureUrl,
    flushAt: 1,
    fetchRetryCount: 0,
    ...(local ? { personalApiKey: credentials.personal_api_key, featureFlagsPollingInterval: 60_000 } : {}),
  });
}

async function basicSdkCalls(
  captureUrl: string,
  managementUrl: string,
  credentials: InitialCredentials,
): Promise<void> {
  const client = await sdk(captureUrl, credentials, false);
  try {
    const options = { sendFeatureFlagEvents: false };
    // Alice is on the pro plan by the properties she sends: the first condition matches.
    const alice = { personProperties: { plan: 'pro' }, ...options };
    expect(await client.isFeatureEnabled('pro-users', 'alice', alice)).toBe(true);
    expect(
      await client.isFeatureEnabled('pro-users', 'bob', { personProperties: { plan: 'free' }, ...options }),
    ).toBe(false);
    const variant = await client.getFeatureFlag('checkout-experiment', 'alice', options);
    expect([undefined, false, 'control', 'one-page', 'express']).toContain(variant);
    const all = await client.getAllFlags('alice', alice);
    expect(Object.keys(all)).toEqual(
      expect.arrayContaining(['half-rollout', 'checkout-experiment', 'pro-users', 'beta-by-age']),
    );
    expect(all['pro-users']).toBe(true);
    if (typeof variant === 'string') {
      const expected = { control: { steps: 3 }, 'one-page': { steps: 1 }, express: 'fast' }[variant];
      expect(await client.getFeatureFlagPayload('checkout-experiment', 'alice', undefined, options)).toEqual(
        expected,
      );
    }
    // Somebody in the half rollout gets its payload.
    let inRollout: string | undefined;
    for (let index = 0; index < 20 && !inRollout; index += 1) {
      if (await client.isFeatureEnabled('half-rollout', `visitor-${index}`, options))
        inRollout = `visitor-${index}`;
    }
    expect(inRollout).toBeDefined();
    expect(await client.getFeatureFlagPayload('half-rollout', inRollout!, undefined, options)).toEqual({
      discount: 10,
    });
    // A group flag needs its group, and reads the group's properties.
    expect(
      await client.isFeatureEnabled('big-companies', 'alice', {
        groups: { company: 'tiny' },
        groupProperties: { company: { employees: 5 } },
        ...options,
      }),
    ).toBe(false);

    // A change over the management API reaches the SDK within seconds.
    const list = await managementRequest<{ results: { id: number; key: string }[] }>(
      managementUrl,
      credentials.personal_api_key,
      'GET',
      `/api/projects/${credentials.project_id}/feature_flags/?search=pro-users`,
    );
    const flagId = list.body.results[0].id;
    await managementRequest(
      managementUrl,
      credentials.personal_api_key,
      'PATCH',
      `/api/projects/${credentials.project_id}/feature_flags/${flagId}/`,
      {
        active: false,
      },
    );
    let enabled = true;
    for (let attempt = 0; attempt < 50 && enabled; attempt += 1) {
      await sleep(200);
      enabled = (await client.isFeatureEnabled('pro-users', 'alice', alice)) === true;
    }
    expect(enabled).toBe(false);
    const reactivated = await managementRequest(
      managementUrl,
      credentials.personal_api_key,
      'PATCH',
      `/api/projects/${credentials.project_id}/feature_flags/${flagId}/`,
      { active: true },
    );
    expect([reactivated.status, reactivated.body.active]).toEqual([200, true]);
    for (let attempt = 0; attempt < 50 && !enabled; attempt += 1) {
      await sleep(200);
      enabled = (await client.isFeatureEnabled('pro-users', 'alice', alice)) === true;
    }
    expect(enabled).toBe(true);
  } finally {
    await client.shutdown();
  }
}

describe('posthog-node flags against npm start', () => {
  let standalone: StandaloneForTest | undefined;
  let captureUrl: string;
  let managementUrl: string;
  let credentials: InitialCredentials;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-flags-test-', { LOG_LEVEL: 'warn' });
    ({ managementUrl, captureUrl, credentials } = standalone);
    await createFeatureFlags(managementUrl, credentials, FLAGS);
    // A group identified through capture gives the project its group type, which group flags need.
    const client = await sdk(captureUrl, credentials, false);
    await client.groupIdentifyImmediate({
      groupType: 'company',
      groupKey: 'company-0',
      properties: { employees: 500 },
    });
    await client.shutdown();
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    if (standalone) expect(await standalone.stop()).toEqual({ code: 0, signal: null });
  });

  it('answers isFeatureEnabled, getFeatureFlag, getFeatureFlagPayload and getAllFlags, and follows changes', async () => {
    await basicSdkCalls(captureUrl, managementUrl, credentials);
  }, 60_000);

  it('evaluates every flag locally (definitions) exactly as remotely (/flags), for a thousand persons', async () => {
    const local = await sdk(captureUrl, credentials, true);
    const remote = await sdk(captureUrl, credentials, false);
    try {
      expect(await local.waitForLocalEvaluationReady(10_000)).toBe(true);
      const seed = 20261122;
      const compared = new Map<string, number>();
      const differences: string[] = [];
      for (const [index, person] of sdkTestPeople(1_000, seed, 'person').entries()) {
        const options = {
          personProperties: person.personProperties,
          groups: person.groups,
          groupProperties: person.groupProperties,
          sendFeatureFlagEvents: false,
        };
        for (const { key } of FLAGS as { key: string }[]) {
          const localValue = await local.getFeatureFlag(key, person.distinctId, {
            ...options,
            onlyEvaluateLocally: true,
          });
          if (localValue === undefined) continue; // posthog-node could not decide locally
          const remoteValue = await remote.getFeatureFlag(key, person.distinctId, options);
          compared.set(key, (compared.get(key) ?? 0) + 1);
          if (localValue !== remoteValue) {
            differences.push(
              `seed ${seed} person ${index} ${key}: local ${String(localValue)}, remote ${String(remoteValue)}`,
            );
          }
        }
      }
      expect(differences).toEqual([]);
      // Every flag was decided locally for most persons, so every flag was compared.
      for (const { key } of FLAGS as { key: string }[]) {
        expect({ key, compared: (compared.get(key) ?? 0) > 500 }).toEqual({ key, compared: true });
      }
    } finally {
      await Promise.all([local.shutdown(), remote.shutdown()]);
    }
  }, 180_000);

  it('keeps a variant across identify for experience-continuity flags ($anon_distinct_id)', async () => {
    const created = await managementRequest(
      managementUrl,
      credentials.personal_api_key,
      'POST',
      `/api/projects/${credentials.project_id}/feature_flags/`,
      {
        key: 'sticky',
        ensure_experience_continuity: true,
        filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
      },
    );
    expect(created.status).toBe(201);
    const flagsFor = async (distinctId: string, anonDistinctId?: string): Promise<boolean | undefined> => {
      const response = await fetch(`${captureUrl}/flags/?v=2`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          token: credentials.project_api_key,
          distinct_id: distinctId,
          ...(anonDistinctId ? { $anon_distinct_id: anonDistinctId } : {}),
        }),
      });
      const body = (await response.json()) as { flags: Record<string, { enabled: boolean }> };
      return body.flags.sticky?.enabled;
    };
    // Definitions are cached for a couple of seconds: wait for the new flag.
    for (let attempt = 0; attempt < 50 && (await flagsFor('probe')) === undefined; attempt += 1)
      await sleep(200);
    const client = await sdk(captureUrl, credentials, false);
    let checked = 0;
    try {
      for (let index = 0; index < 40 && checked < 5; index += 1) {
        const [anonymous, user] = [`anon-${index}`, `user-sticky-${index}`];
        const before = await flagsFor(anonymous);
        // Only pairs whose own hashes disagree show that the anonymous id's answer was kept.
        if (before === (await flagsFor(user))) continue;
        // The identify merges the anonymous id into the user's person (a 200 means stored).
        client.identify({ distinctId: user, properties: { $anon_distinct_id: anonymous } });
        await client.flush();
        expect({ index, value: await flagsFor(user, anonymous) }).toEqual({ index, value: before });
        expect({ index, value: await flagsFor(user) }).toEqual({ index, value: before });
        checked += 1;
      }
    } finally {
      await client.shutdown();
    }
    expect(checked).toBe(5);
  }, 60_000);
});

describe('posthog-node flags against split mode', () => {
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  const run = randomBytes(4).toString('hex');
  let database: TestDatabase;
  let dataDir: string;
  let capture: AppProcess | undefined;
  let managementApp: AppProcess | undefined;

  afterAll(async () => {
    await killApps(capture, managementApp);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'serves flags created on the management process to the SDK on the capture process',
    async () => {
      if (brokers.length === 0)
        throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
      database = await createTestDatabase();
      dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-flags-split-'));
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
        DATABASE_URL: database.url,
        KAFKA_BROKERS: brokers.join(','),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
      };
      delete env.CLICKHOUSE_URL;
      delete env.NODE_OPTIONS;
      const bootstrap = await runProcess(
        'npm',
        ['run', 'admin', '--', 'bootstrap', '--email', `owner-${run}@flags.test`],
        {
          cwd: REPO_ROOT,
          env,
          timeoutMs: 60_000,
        },
      );
      expect({ code: bootstrap.code, stderr: bootstrap.stderr }).toEqual({ code: 0, stderr: '' });
      const credentials = JSON.parse(bootstrap.stdout) as InitialCredentials;
      const [capturePort, managementPort] = [await freePort(), await freePort()];
      capture = startApp('capture', { ...env, CAPTURE_PORT: String(capturePort) });
      managementApp = startApp('management', { ...env, MANAGEMENT_PORT: String(managementPort) });
      const captureUrl = `http://127.0.0.1:${capturePort}`;
      const managementUrl = `http://127.0.0.1:${managementPort}`;
      await waitForReady(capture, captureUrl);
      await waitForReady(managementApp, managementUrl);
      await createFeatureFlags(managementUrl, credentials, FLAGS);
      await basicSdkCalls(captureUrl, managementUrl, credentials);

      const local = await sdk(captureUrl, credentials, true);
      try {
        expect(await local.waitForLocalEvaluationReady(10_000)).toBe(true);
        expect(
          await local.isFeatureEnabled('pro-users', 'carol', {
            personProperties: { plan: 'enterprise' },
            onlyEvaluateLocally: true,
            sendFeatureFlagEvents: false,
          }),
        ).toBe(true);
      } finally {
        await local.shutdown();
      }
      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });
      expect(await stopApp(managementApp)).toEqual({ code: 0, signal: null });
    },
    4 * READY_TIMEOUT_MS,
  );
});
