import { createHash, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { Pool } from 'pg';
import type { BenchConfig } from './bench.config';
import type { BenchDatabase, Project } from './bench-database.util';
import { median, printRoundsTable, summaryLine, type BenchSummary, type Metric } from './report.util';
import type { TargetProcess } from './target-process.util';

const FLAG_COUNT = 50;
const DISTINCT_BODIES = 200;
const ORGANIZATION_ID = '00000000-0000-4000-8000-00000000be4c';

/** 50 flags of the kinds a product has: rollouts, variants with payloads, person and group targeting. */
function flagDefinitions(): { key: string; filters: Record<string, unknown>; continuity: boolean }[] {
  return Array.from({ length: FLAG_COUNT }, (_, index) => {
    const key = `flag-${index}`;
    switch (index % 5) {
      case 0:
        return {
          key,
          continuity: false,
          filters: {
            groups: [{ properties: [], rollout_percentage: 10 + index }],
            payloads: { true: '{"on": true}' },
          },
        };
      case 1:
        return {
          key,
          continuity: index === 1,
          filters: {
            groups: [{ properties: [], rollout_percentage: 100 }],
            multivariate: {
              variants: [
                { key: 'control', rollout_percentage: 50 },
                { key: 'test', rollout_percentage: 50 },
              ],
            },
            payloads: { control: '{"v": 0}', test: '{"v": 1}' },
          },
        };
      case 2:
        return {
          key,
          continuity: false,
          filters: {
            groups: [
              {
                properties: [
                  { key: 'plan', value: ['pro', 'enterprise'], operator: 'exact', type: 'person' },
                ],
                rollout_percentage: 100,
              },
              {
                properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }],
                rollout_percentage: 50,
              },
            ],
          },
        };
      case 3:
        return {
          key,
          continuity: false,
          filters: {
            groups: [
              {
                properties: [
                  { key: 'age', value: '30', operator: 'gt', type: 'person' },
                  { key: '$browser', value: '^(Chrome|Firefox)$', operator: 'regex', type: 'person' },
                ],
                rollout_percentage: 80,
              },
            ],
          },
        };
      default:
        return {
          key,
          continuity: false,
          filters: {
            aggregation_group_type_index: 0,
            groups: [
              {
                properties: [
                  { key: 'employees', value: '50', operator: 'gte', type: 'group', group_type_index: 0 },
                ],
                rollout_percentage: 60,
              },
            ],
          },
        };
    }
  });
}

/** The project's flags, its group type, and a personal key that may read its definitions. */
async function seed(database: BenchDatabase, project: Project): Promise<string> {
  const pool = new Pool({ connectionString: database.url, max: 1 });
  try {
    for (const flag of flagDefinitions()) {
      await pool.query(
        `INSERT INTO feature_flags (team_id, key, filters, ensure_experience_continuity) VALUES ($1, $2, $3, $4)`,
        [project.id, flag.key, flag.filters, flag.continuity],
      );
    }
    await pool.query(
      `INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, 'company', 0)`,
      [project.id],
    );
    const [user] = (
      await pool.query<{ id: number }>(
        `INSERT INTO users (uuid, distinct_id, email) VALUES ($1, $2, $3) RETURNING id`,
        [randomUUID(), randomUUID(), `flags-bench-${project.id}@example.com`],
      )
    ).rows;
    await pool.query(
      `INSERT INTO organization_memberships (id, organization_id, user_id, level) VALUES ($1, $2, $3, 15)
       ON CONFLICT DO NOTHING`,
      [randomUUID(), ORGANIZATION_ID, user.id],
    );
    const key = `phx_bench${randomUUID().replaceAll('-', '')}`;
    await pool.query(
      `INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes)
       VALUES ($1, $2, 'bench', $3, 'phx_...', ARRAY['feature_flag:read'])`,
      [randomUUID().slice(0, 20), user.id, `sha256$${createHash('sha256').update(key).digest('hex')}`],
    );
    return key;
  } finally {
    await pool.end();
  }
}

/** What posthog-node sends for a server-side user: its properties and its company. */
function flagRequests(token: string): autocannon.Request[] {
  const browsers = ['Chrome', 'Firefox', 'Safari'];
  const plans = ['free', 'pro', 'enterprise'];
  return Array.from({ length: DISTINCT_BODIES }, (_, index) => ({
    method: 'POST',
    path: '/flags/?v=2',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      token,
      distinct_id: `bench-user-${index}`,
      groups: { company: `company-${index % 20}` },
      person_properties: {
        plan: plans[index % 3],
        email: index % 4 === 0 ? `u${index}@acme.com` : `u${index}@example.org`,
        age: 18 + (index % 50),
        $browser: browsers[index % 3],
      },
      group_properties: { company: { employees: (index * 7) % 200 } },
    }),
  }));
}

interface Measured {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
}

async function load(
  target: TargetProcess,
  connections: number,
  seconds: number,
  requests: autocannon.Request[],
  expect2xxOr304 = false,
): Promise<Measured> {
  const result = await autocannon({ url: target.url, connections, duration: seconds, requests });
  const ok = expect2xxOr304 ? result['2xx'] + result['3xx'] : result['2xx'];
  return {
    requestsPerSecond: ok / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failed: result.errors + (expect2xxOr304 ? result['4xx'] + result['5xx'] : result.non2xx),
  };
}

/**
 * `/flags?v=2` with 50 flags of mixed conditions (each request evaluates all of them for its own
 * person and company), beside `/_health` on the same capture process (HTTP and routing only), and
 * the local-evaluation definitions with and without `If-None-Match`.
 */
export async function runFlagsBench(
  config: BenchConfig,
  capture: TargetProcess,
  database: BenchDatabase,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const project = await database.createProject('flags');
  const personalKey = await seed(database, project);
  const flags = flagRequests(project.token);
  const definitionsPath = `/flags/definitions?token=${project.token}&send_cohorts`;
  const auth = { authorization: `Bearer ${personalKey}` };
  const first = await fetch(`${capture.url}${definitionsPath}`, { headers: auth });
  const etag = first.headers.get('etag') ?? '';
  const definitions = (await first.json()) as { flags?: unknown[] };
  if (first.status !== 200 || definitions.flags?.length !== FLAG_COUNT) {
    throw new Error(`definitions: ${first.status}, ${definitions.flags?.length ?? 0} flags`);
  }
  const paths: Record<string, autocannon.Request[]> = {
    health: [{ method: 'GET', path: '/_health' }],
    flags,
    definitions: [{ method: 'GET', path: definitionsPath, headers: auth }],
    definitions_etag: [{ method: 'GET', path: definitionsPath, headers: { ...auth, 'if-none-match': etag } }],
  };
  const names = Object.keys(paths);
  for (const name of names)
    await load(
      capture,
      config.connections,
      config.warmupSeconds || 1,
      paths[name],
      name === 'definitions_etag',
    );
  const rounds = new Map(names.map((name) => [name, [] as Measured[]]));
  for (let round = 0; round < config.rounds; round += 1) {
    const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
    for (const name of order) {
      const measured = await load(
        capture,
        config.connections,
        config.durationSeconds,
        paths[name],
        name === 'definitions_etag',
      );
      if (measured.failed > 0) log(`flags: ${name} round ${round + 1}: ${measured.failed} failed requests`);
      rounds.get(name)!.push(measured);
    }
    log(`flags: round ${round + 1} of ${config.rounds} done`);
  }
  const series = (name: string, field: keyof Measured) =>
    rounds.get(name)!.map((measured) => measured[field]);
  const metrics: Metric[] = [
    {
      key: 'health_rps',
      label: 'baseline: GET /_health, requests/s',
      rounds: series('health', 'requestsPerSecond'),
    },
    {
      key: 'flags_rps',
      label: `POST /flags?v=2 (${FLAG_COUNT} flags), requests/s`,
      rounds: series('flags', 'requestsPerSecond'),
    },
    { key: 'flags_p50_ms', label: '/flags p50, ms', rounds: series('flags', 'p50Ms') },
    { key: 'flags_p99_ms', label: '/flags p99, ms', rounds: series('flags', 'p99Ms') },
    {
      key: 'flags_ratio',
      label: '/flags / baseline',
      rounds: series('flags', 'requestsPerSecond').map(
        (value, index) => value / series('health', 'requestsPerSecond')[index],
      ),
      digits: 2,
    },
    {
      key: 'definitions_rps',
      label: 'definitions 200 (full body), requests/s',
      rounds: series('definitions', 'requestsPerSecond'),
    },
    {
      key: 'definitions_etag_rps',
      label: 'definitions 304 (If-None-Match), requests/s',
      rounds: series('definitions_etag', 'requestsPerSecond'),
    },
    { key: 'definitions_p99_ms', label: 'definitions 200 p99, ms', rounds: series('definitions', 'p99Ms') },
    {
      key: 'definitions_etag_p99_ms',
      label: 'definitions 304 p99, ms',
      rounds: series('definitions_etag', 'p99Ms'),
    },
  ];
  printRoundsTable(
    `Flags: ${config.connections} connections, ${config.durationSeconds} s per path per round`,
    metrics,
  );
  log(`flags: /flags median ${median(series('flags', 'requestsPerSecond')).toFixed(0)} requests/s`);
  return summaryLine('flags', { flags: FLAG_COUNT, connections: config.connections }, metrics);
}
