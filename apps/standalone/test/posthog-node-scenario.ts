import { setTimeout as sleep } from 'node:timers/promises';

/** `run` makes every distinct id unique, so the checks hold on a shared topic or database. */
export interface SdkScenario {
  user: string;
  alias: string;
  company: string;
}

export function sdkScenario(run: string): SdkScenario {
  return { user: `user-${run}`, alias: `alias-${run}`, company: `acme-${run}` };
}

export async function sendWithPosthogNode(
  captureUrl: string,
  projectApiKey: string,
  scenario: SdkScenario,
): Promise<void> {
  const { PostHog } = await import('posthog-node');
  const client = new PostHog(projectApiKey, { host: captureUrl, flushAt: 1, fetchRetryCount: 0 });
  client.identify({
    distinctId: scenario.user,
    properties: { email: `${scenario.user}@example.com`, $set_once: { first_seen_plan: 'free' } },
  });
  client.alias({ distinctId: scenario.user, alias: scenario.alias });
  client.groupIdentify({
    groupType: 'company',
    groupKey: scenario.company,
    properties: { name: 'Acme Inc', employees: 42 },
  });
  client.capture({
    distinctId: scenario.user,
    event: 'order placed',
    properties: { amount: 99.5, currency: 'EUR' },
    groups: { company: scenario.company },
  });
  client.capture({
    distinctId: scenario.user,
    event: '$pageview',
    properties: { $current_url: 'https://example.com/' },
  });
  await client.shutdown();
}

interface Listed {
  status: number;
  body: Record<string, any>;
}

async function list(managementUrl: string, key: string, projectId: number, query: string): Promise<Listed> {
  const response = await fetch(`${managementUrl}/api/projects/${projectId}/events/?${query}`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Retries until `timeoutMs`: in split mode ingestion is asynchronous. */
export async function expectListedBack(
  managementUrl: string,
  key: string,
  projectId: number,
  scenario: SdkScenario,
  timeoutMs = 0,
): Promise<void> {
  const query = new URLSearchParams({ distinct_id: scenario.user, orderBy: '["timestamp"]' }).toString();
  const deadline = Date.now() + timeoutMs;
  let listed = await list(managementUrl, key, projectId, query);
  while (listed.body.results?.length < 4 && Date.now() < deadline) {
    await sleep(250);
    listed = await list(managementUrl, key, projectId, query);
  }
  expect(listed.status).toBe(200);
  const events = listed.body.results as Record<string, any>[];
  expect(events.map((event) => event.event)).toEqual([
    '$identify',
    '$create_alias',
    'order placed',
    '$pageview',
  ]);

  const [identify, alias, order, pageview] = events;
  expect(identify.properties.$set).toEqual({ email: `${scenario.user}@example.com` });
  expect(alias.properties.alias).toBe(scenario.alias);
  expect(order.properties).toMatchObject({
    amount: 99.5,
    currency: 'EUR',
    $groups: { company: scenario.company },
  });
  expect(pageview.properties.$current_url).toBe('https://example.com/');
  expect(new Set(events.map((event) => event.id)).size).toBe(4);
  for (const event of events) {
    expect(event.person).toEqual({
      is_identified: true,
      distinct_ids: [scenario.alias, scenario.user].sort(),
      properties: expect.objectContaining({ email: `${scenario.user}@example.com`, first_seen_plan: 'free' }),
    });
  }

  // The group event is listed under the group's own distinct id.
  const groupEvents = await list(
    managementUrl,
    key,
    projectId,
    new URLSearchParams({ event: '$groupidentify', distinct_id: `$company_${scenario.company}` }).toString(),
  );
  expect(groupEvents.body.results).toHaveLength(1);
  expect(groupEvents.body.results[0].properties).toMatchObject({
    $group_type: 'company',
    $group_key: scenario.company,
    $group_set: { name: 'Acme Inc', employees: 42 },
  });
  const grouped = await list(
    managementUrl,
    key,
    projectId,
    new URLSearchParams({
      select: JSON.stringify(['event', '$group_0']),
      where: JSON.stringify([`distinct_id = '${scenario.user}'`, "event = 'order placed'"]),
    }).toString(),
  );
  expect(grouped.body.results).toEqual([['order placed', scenario.company]]);
}
