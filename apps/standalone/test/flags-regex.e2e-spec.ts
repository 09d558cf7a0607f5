import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';

/**
 * Flag regexes against hostile properties sent with the public project token, end to end: the
 * patterns of a reported ReDoS (a backtracking engine took 5.5 s on 25 `a`s and `!` with
 * `(a|a)*$`, 45 s on 28, and hung the process beyond) are saved over the management API, and
 * `/flags` answers them on long values before a deadline while `/_ready` keeps answering.
 */

/** Generous: RE2 answers in milliseconds; the deadline only turns a hang into a failure. */
const DEADLINE_MS = 15_000;
const LONGEST = 4_096; // MAX_REGEX_SUBJECT_LENGTH

const ANY_TWELVE_TIMES = `${'[\\s\\S]*'.repeat(12)}!`;

const REGEX_FLAGS = [
  { key: 'redos-a-or-a', operator: 'regex', value: '(a|a)*$' },
  { key: 'redos-a-or-aa', operator: 'regex', value: '(a|aa)+$' },
  { key: 'redos-a-b-ab', operator: 'regex', value: '(a|b|ab)*c' },
  { key: 'redos-any-twelve', operator: 'regex', value: ANY_TWELVE_TIMES },
  { key: 'redos-not-a-or-aa', operator: 'not_regex', value: '(a|aa)+$' },
];

/** Each email and the flags it turns on, in REGEX_FLAGS order. */
const EMAILS: [string, string, boolean[]][] = [
  ['25 a then !', `${'a'.repeat(25)}!`, [true, false, false, true, true]],
  ['28 a then !', `${'a'.repeat(28)}!`, [true, false, false, true, true]],
  [`${LONGEST - 1} a then !`, `${'a'.repeat(LONGEST - 1)}!`, [true, false, false, true, true]],
  [`${LONGEST} a`, 'a'.repeat(LONGEST), [true, true, false, false, false]],
  [`${LONGEST / 2} ab`, 'ab'.repeat(LONGEST / 2), [true, false, false, false, true]],
  // Past the length bound a regex matches neither way, as PostHog's service treats a regex error.
  [`${LONGEST + 1000} a then !`, `${'a'.repeat(LONGEST + 1000)}!`, [false, false, false, false, false]],
];

async function management(
  baseUrl: string,
  credentials: InitialCredentials,
  method: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/api/projects/${credentials.project_id}/feature_flags/`, {
    method,
    headers: { Authorization: `Bearer ${credentials.personal_api_key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function regexFlag(key: string, operator: string, value: string): Record<string, unknown> {
  return {
    key,
    filters: {
      groups: [{ properties: [{ key: 'email', type: 'person', operator, value }], rollout_percentage: 100 }],
    },
  };
}

/** `/flags?v=2` for one person, failing at the deadline instead of waiting on a blocked process. */
async function flagsFor(
  captureUrl: string,
  credentials: InitialCredentials,
  distinctId: string,
  email: string,
): Promise<Record<string, { enabled: boolean }>> {
  const response = await fetch(`${captureUrl}/flags/?v=2`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      token: credentials.project_api_key,
      distinct_id: distinctId,
      person_properties: { email },
    }),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { flags: Record<string, { enabled: boolean }> }).flags;
}

async function readyStatus(baseUrl: string): Promise<number> {
  return (await fetch(`${baseUrl}/_ready`, { signal: AbortSignal.timeout(DEADLINE_MS) })).status;
}

/** Starts `npm start` (with `extraEnv`), runs the scenario, stops it cleanly. */
function describeRegexFlags(name: string, extraEnv: () => Promise<NodeJS.ProcessEnv>): void {
  describe(name, () => {
    let standalone: StandaloneForTest | undefined;
    let managementUrl: string;
    let captureUrl: string;
    let credentials: InitialCredentials;

    beforeAll(async () => {
      standalone = await startStandaloneForTest('hogbase-flags-regex-', {
        LOG_LEVEL: 'warn',
        ...(await extraEnv()),
      });
      ({ managementUrl, captureUrl, credentials } = standalone);
    }, READY_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      if (standalone) expect(await standalone.stop()).toEqual({ code: 0, signal: null });
    });

    it('refuses at creation a regex RE2 cannot compile (backreference, lookahead) with a 400 on filters', async () => {
      for (const pattern of ['^(a+)\\1+$', 'a(?=b)']) {
        const response = await management(
          managementUrl,
          credentials,
          'POST',
          regexFlag('refused', 'regex', pattern),
        );
        expect({ pattern, status: response.status, body: response.body }).toEqual({
          pattern,
          status: 400,
          body: {
            type: 'validation_error',
            code: 'invalid_value',
            attr: 'filters',
            detail: expect.stringContaining(
              `Invalid value for operator regex: ${pattern} is not a regular expression flags can evaluate: `,
            ) as unknown,
          },
        });
      }
    });

    it('answers /flags on long hostile emails before the deadline, and /_ready meanwhile', async () => {
      for (const flag of REGEX_FLAGS) {
        const created = await management(
          managementUrl,
          credentials,
          'POST',
          regexFlag(flag.key, flag.operator, flag.value),
        );
        expect({ key: flag.key, status: created.status }).toEqual({ key: flag.key, status: 201 });
      }
      // Definitions are cached for a couple of seconds: wait until /flags knows every new flag.
      const keys = REGEX_FLAGS.map((flag) => flag.key);
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const flags = await flagsFor(captureUrl, credentials, 'probe', 'probe@example.com');
        if (keys.every((key) => key in flags)) break;
        await sleep(200);
      }

      // All at once, as an attacker would send them; /_ready goes out behind them on both servers.
      const answers = Promise.all(
        EMAILS.map(([, email], index) => flagsFor(captureUrl, credentials, `hostile-${index}`, email)),
      );
      const ready = Promise.all([readyStatus(managementUrl), readyStatus(captureUrl)]);
      expect(await ready).toEqual([200, 200]);
      const results = await answers;
      EMAILS.forEach(([label, , expected], index) => {
        const enabled = keys.map((key) => results[index][key]?.enabled);
        expect({ email: label, enabled }).toEqual({ email: label, enabled: expected });
      });
      expect([await readyStatus(managementUrl), await readyStatus(captureUrl)]).toEqual([200, 200]);
    }, 60_000);
  });
}

describeRegexFlags('flag regexes against npm start (embedded Postgres)', () => Promise.resolve({}));

let database: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
});

describeRegexFlags("flag regexes against npm start on the machine's PostgreSQL", async () => {
  if (!process.env.TEST_DATABASE_URL) {
    throw new Error('TEST_DATABASE_URL is not set: run through `npm test`, which sets it');
  }
  database = await createTestDatabase();
  return { DATABASE_URL: database.url };
});
