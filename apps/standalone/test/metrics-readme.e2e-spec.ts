import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  READY_TIMEOUT_MS,
  REPO_ROOT,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';

interface ListedMetric {
  type: string;
  service: string;
}

/** The README's "## Metrics" table: exact names, and families written as `prefix_*`. */
function readmeMetrics(readme: string): { names: Map<string, ListedMetric>; families: string[] } {
  const start = readme.indexOf('\n## Metrics\n');
  if (start < 0) throw new Error('README.md has no "## Metrics" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const names = new Map<string, ListedMetric>();
  const families: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line.split('|').map((cell) => cell.trim());
    // cells[0] is the empty text before the first pipe; the header and its rule name no metric.
    const [, nameCell, type, , , service] = cells;
    for (const match of nameCell.matchAll(/`([a-z_:][a-z0-9_:]*\*?)`/g)) {
      const name = match[1];
      if (name.endsWith('*')) families.push(name.slice(0, -1));
      else names.set(name, { type, service });
    }
  }
  return { names, families };
}

/** Every `# TYPE <name> <type>` of a Prometheus text exposition. */
function exportedTypes(exposition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(match[1], match[2]);
  return types;
}

async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/**
 * The README's metrics table against what `npm start` exports, both ways: a metric added in code
 * but not documented fails, and so does a documented one that no longer exists.
 */
describe('README metrics table', () => {
  let standalone: StandaloneForTest | undefined;
  let managementUrl: string;
  let captureUrl: string;
  let credentials: InitialCredentials;
  let listed: ReturnType<typeof readmeMetrics>;
  let processMetrics: Map<string, string>;
  let captureMetrics: Map<string, string>;
  let captureExposition: string;

  beforeAll(async () => {
    listed = readmeMetrics(await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8'));
    standalone = await startStandaloneForTest('hogbase-metrics-readme-test-');
    ({ managementUrl, captureUrl, credentials } = standalone);

    // Traffic first, so that any metric created on first use is there too.
    const { PostHog } = await import('posthog-node');
    const client = new PostHog(credentials.project_api_key, {
      host: captureUrl,
      flushAt: 1,
      fetchRetryCount: 0,
    });
    client.capture({ distinctId: 'metrics-readme-user', event: 'metrics readme' });
    await client.shutdown();
    const api = await fetch(`${managementUrl}/api/projects/${credentials.project_id}/events/`, {
      headers: { Authorization: `Bearer ${credentials.personal_api_key}` },
    });
    expect(api.status).toBe(200);

    processMetrics = exportedTypes(await scrape(managementUrl));
    captureExposition = await scrape(captureUrl);
    captureMetrics = exportedTypes(captureExposition);
  }, READY_TIMEOUT_MS * 2);

  afterAll(async () => {
    await standalone?.stop().catch(() => undefined);
  });

  const inFamily = (name: string): boolean => listed.families.some((prefix) => name.startsWith(prefix));

  it('counted the traffic it sent (capture accepted the SDK event)', () => {
    const accepted = /^capture_events_total\{outcome="accepted"\} (\d+)/m.exec(captureExposition);
    expect(Number(accepted?.[1] ?? 0)).toBeGreaterThanOrEqual(1);
  });

  it('lists every metric the process exports, with its type', () => {
    const exported = new Map([...processMetrics, ...captureMetrics]);
    const missing = [...exported.keys()].filter((name) => !listed.names.has(name) && !inFamily(name));
    expect(missing).toEqual([]);
    const wrongType = [...listed.names]
      .filter(([name, { type }]) => exported.has(name) && exported.get(name) !== type)
      .map(([name, { type }]) => `${name}: README ${type}, exported ${exported.get(name)}`);
    expect(wrongType).toEqual([]);
  });

  it('lists only metrics that are exported', () => {
    const stale = [...listed.names.keys()].filter((name) => !processMetrics.has(name));
    expect(stale).toEqual([]);
    const emptyFamilies = listed.families.filter(
      (prefix) => ![...processMetrics.keys()].some((name) => name.startsWith(prefix)),
    );
    expect(emptyFamilies).toEqual([]);
  });

  it("says capture's own port serves capture's metrics", () => {
    const elsewhere = [...captureMetrics.keys()]
      .filter((name) => !inFamily(name))
      .filter((name) => listed.names.get(name)?.service !== 'capture');
    expect(elsewhere).toEqual([]);
    expect(
      [...captureMetrics.keys()].filter((name) => inFamily(name) && !name.startsWith('capture_')),
    ).toEqual([]);
  });
});
