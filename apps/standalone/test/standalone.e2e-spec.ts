import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dataDirHolder, findRunningEmbeddedPostgres } from '@hogbase/postgres';
import { runProcess, UUID_PATTERN as UUID } from '@hogbase/test-support';
import { expectListedBack, sdkScenario, sendWithPosthogNode } from './posthog-node-scenario';
import {
  CREDENTIALS_FILE,
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  standaloneEnv,
  startApp,
  startStandaloneForTest,
  STOP_TIMEOUT_MS,
  stopApp,
  waitForReady,
  type AppProcess,
  type InitialCredentials,
} from './app-process';

const CLI_TIMEOUT_MS = 60_000;
/** What an older version wrote to record its server (now ignored: the data directory's OS lock replaced it). */
const LEGACY_LOCK_FILE = 'postgres.lock.json';

type RunningServer = AppProcess;

function startStandalone(dataDir: string, port: number, capturePort = 0): RunningServer {
  return startApp('standalone', standaloneEnv(dataDir, port, capturePort));
}

const stopStandalone = stopApp;

/** `npm run admin -- <args>` as an operator types it, on the same DATA_DIR and without DATABASE_URL. */
function runAdmin(
  dataDir: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = standaloneEnv(dataDir, 0);
  delete env.MANAGEMENT_PORT;
  return runProcess('npm', ['run', 'admin', '--', ...args], {
    cwd: REPO_ROOT,
    env,
    timeoutMs: CLI_TIMEOUT_MS - 5_000,
  });
}

async function get(baseUrl: string, requestPath: string, key: string) {
  const response = await fetch(`${baseUrl}${requestPath}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/**
 * Keeps `concurrency` authenticated requests in flight until stopped, so the server holds every
 * connection of its Postgres pool open (an idle pooled connection would be closed after a while).
 */
function keepServerBusy(baseUrl: string, key: string, concurrency: number) {
  let running = true;
  let completed = 0;
  const failures: string[] = [];
  const worker = async () => {
    while (running) {
      try {
        const response = await fetch(`${baseUrl}/api/organizations/`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        await response.arrayBuffer();
        if (response.status === 200) completed += 1;
        else failures.push(`HTTP ${response.status}`);
      } catch (error) {
        failures.push(String(error));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, () => worker());
  return {
    completed: () => completed,
    async stop() {
      running = false;
      await Promise.all(workers);
      return { completed, failures };
    },
  };
}

describe('npm start (standalone on embedded Postgres)', () => {
  let dataDir: string;
  let port: number;
  let baseUrl: string;
  let credentialsPath: string;
  let first: RunningServer | undefined;
  let second: RunningServer | undefined;
  let third: RunningServer | undefined;
  let credentials: InitialCredentials;
  let credentialsText: string;
  let credentialsMtimeMs: number;
  let cliKey: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-standalone-test-'));
    port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    credentialsPath = path.join(dataDir, CREDENTIALS_FILE);
  });

  afterAll(async () => {
    await killApps(first, second, third);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  describe('first start on an empty DATA_DIR', () => {
    it(
      'answers GET /_ready with 200 within 60 s',
      async () => {
        first = startStandalone(dataDir, port);

        await waitForReady(first, baseUrl);

        const ready = await fetch(`${baseUrl}/_ready`);
        expect(ready.status).toBe(200);
      },
      READY_TIMEOUT_MS + 10_000,
    );

    it('writes initial-credentials.json, readable by the owner only, with the five contract fields', async () => {
      const file = await stat(credentialsPath);
      credentialsText = await readFile(credentialsPath, 'utf8');
      credentialsMtimeMs = file.mtimeMs;
      credentials = JSON.parse(credentialsText) as InitialCredentials;

      expect(file.mode & 0o777).toBe(0o600);
      expect(Object.keys(credentials).sort()).toEqual([
        'email',
        'organization_id',
        'personal_api_key',
        'project_api_key',
        'project_id',
      ]);
      expect(credentials.email).toEqual(expect.stringMatching(/^[^\s@]+@[^\s@]+$/));
      expect(credentials.personal_api_key).toEqual(expect.stringMatching(/^phx_[A-Za-z0-9]{20,}$/));
      expect(credentials.organization_id).toEqual(expect.stringMatching(UUID));
      expect(Number.isInteger(credentials.project_id)).toBe(true);
      expect(credentials.project_api_key).toEqual(expect.stringMatching(/^phc_[A-Za-z0-9]{20,}$/));
    });

    it('keeps the embedded database directory private to its owner', async () => {
      const databaseDir = await stat(path.join(dataDir, 'postgres'));

      expect(databaseDir.isDirectory()).toBe(true);
      expect(databaseDir.mode & 0o077).toBe(0);
    });

    it("logs the credentials file's path but never the key", () => {
      const output = first!.output();

      expect(output).toContain(credentialsPath);
      expect(output).not.toContain(credentials.personal_api_key);
      expect(output).not.toContain(credentials.personal_api_key.slice(4));
    });

    it('serves the organization and project to the initial key over HTTP', async () => {
      const organizations = await get(baseUrl, '/api/organizations/', credentials.personal_api_key);
      const project = await get(
        baseUrl,
        `/api/projects/${credentials.project_id}/`,
        credentials.personal_api_key,
      );

      expect(organizations.status).toBe(200);
      expect(organizations.body.results.map((organization: { id: string }) => organization.id)).toEqual([
        credentials.organization_id,
      ]);
      expect(organizations.body.results[0].membership_level).toBe(15);
      expect(project.status).toBe(200);
      expect(project.body.api_token).toBe(credentials.project_api_key);
    });

    it(
      'runs `npm run admin -- create-key` on the same DATA_DIR through the running server, and the key works',
      async () => {
        expect((await dataDirHolder(dataDir))?.pid).toBe(first!.child.pid);

        const result = await runAdmin(dataDir, [
          'create-key',
          '--email',
          credentials.email,
          '--scopes',
          'organization:read',
          '--organizations',
          credentials.organization_id,
        ]);

        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
        expect(result.stdout).toMatch(/^\{"personal_api_key":"phx_[A-Za-z0-9]+"\}\n$/);
        cliKey = (JSON.parse(result.stdout) as { personal_api_key: string }).personal_api_key;
        // The CLI went through the server's socket: the server still holds DATA_DIR.
        expect((await dataDirHolder(dataDir))?.pid).toBe(first!.child.pid);
        const organizations = await get(baseUrl, '/api/organizations/', cliKey);
        expect(organizations.status).toBe(200);
        expect(organizations.body.results[0].id).toBe(credentials.organization_id);
        const refused = await fetch(`${baseUrl}/api/organizations/`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${cliKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'not allowed' }),
        });
        expect(refused.status).toBe(403);
        expect(first!.output()).not.toContain(cliKey);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'serves `npm run admin -- create-key` through the running server while its own Postgres pool is busy',
      async () => {
        const load = keepServerBusy(baseUrl, credentials.personal_api_key, 30);
        let result: Awaited<ReturnType<typeof runAdmin>>;
        try {
          // Long enough for the pool to grow to its maximum before the CLI connects.
          while (load.completed() < 100) await sleep(50);
          result = await runAdmin(dataDir, [
            'create-key',
            '--email',
            credentials.email,
            '--scopes',
            'organization:read',
          ]);
        } finally {
          const { completed, failures } = await load.stop();
          expect(failures).toEqual([]);
          expect(completed).toBeGreaterThan(100);
        }

        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
        const key = (JSON.parse(result.stdout) as { personal_api_key: string }).personal_api_key;
        expect((await get(baseUrl, '/api/organizations/', key)).status).toBe(200);
      },
      CLI_TIMEOUT_MS + 10_000,
    );

    it(
      'refuses a second `npm start` on the same DATA_DIR while the first runs, and the first keeps serving',
      async () => {
        const intruder = startStandalone(dataDir, await freePort());

        const { code } = await intruder.exited;

        expect(code).not.toBe(0);
        expect(intruder.output()).toContain(`in use by another process (pid ${first!.child.pid}`);
        expect((await fetch(`${baseUrl}/_ready`)).status).toBe(200);
        expect((await get(baseUrl, '/api/organizations/', credentials.personal_api_key)).status).toBe(200);
        expect((await dataDirHolder(dataDir))?.pid).toBe(first!.child.pid);
      },
      READY_TIMEOUT_MS,
    );

    it(
      'stops on SIGTERM with exit code 0 and releases the embedded database',
      async () => {
        const result = await stopStandalone(first!);

        expect(result).toEqual({ code: 0, signal: null });
        expect(await dataDirHolder(dataDir)).toBeUndefined();
        await expect(fetch(`${baseUrl}/_ready`)).rejects.toThrow();
      },
      STOP_TIMEOUT_MS + 5_000,
    );
  });

  describe('second start on the same DATA_DIR', () => {
    it(
      'becomes ready again',
      async () => {
        expect(credentials).toBeDefined();
        second = startStandalone(dataDir, port);

        await waitForReady(second, baseUrl);
      },
      READY_TIMEOUT_MS + 10_000,
    );

    it('leaves initial-credentials.json untouched and does not announce new credentials', async () => {
      const file = await stat(credentialsPath);

      expect(await readFile(credentialsPath, 'utf8')).toBe(credentialsText);
      expect(file.mtimeMs).toBe(credentialsMtimeMs);
      expect(file.mode & 0o777).toBe(0o600);
      expect(second!.output()).not.toContain(credentialsPath);
    });

    it('keeps the data: the initial key and the key made by the CLI still work on the same organization', async () => {
      const organizations = await get(baseUrl, '/api/organizations/', credentials.personal_api_key);
      const throughCliKey = await get(baseUrl, `/api/organizations/${credentials.organization_id}/`, cliKey);

      expect(organizations.status).toBe(200);
      expect(organizations.body.count).toBe(1);
      expect(organizations.body.results[0].id).toBe(credentials.organization_id);
      expect(throughCliKey.status).toBe(200);
      expect(second!.output()).not.toContain(credentials.personal_api_key);
    });

    it(
      'stops on SIGTERM with exit code 0',
      async () => {
        expect(await stopStandalone(second!)).toEqual({ code: 0, signal: null });
      },
      STOP_TIMEOUT_MS + 5_000,
    );
  });

  describe('start after a crash', () => {
    it(
      'starts although the lock left by a killed server names a pid that another live process now has',
      async () => {
        // What SIGKILL leaves behind once the pid has been reused: here by the test runner itself.
        await writeFile(
          path.join(dataDir, LEGACY_LOCK_FILE),
          JSON.stringify({ pid: process.pid, port: await freePort() }),
        );
        third = startStandalone(dataDir, port);

        await waitForReady(third, baseUrl);

        const organizations = await get(baseUrl, '/api/organizations/', credentials.personal_api_key);
        expect(organizations.body.results[0].id).toBe(credentials.organization_id);
        expect((await dataDirHolder(dataDir))?.pid).toBe(third.child.pid);
        expect(await stopStandalone(third)).toEqual({ code: 0, signal: null });
      },
      READY_TIMEOUT_MS + STOP_TIMEOUT_MS,
    );
  });
});

describe('npm start: the event pipeline', () => {
  it('stores what posthog-node sends to the capture port and lists it on the management port', async () => {
    const standalone = await startStandaloneForTest('hogbase-pipeline-test-');
    const { dataDir, managementUrl, captureUrl, credentials } = standalone;
    try {
      const scenario = sdkScenario('standalone');
      await sendWithPosthogNode(captureUrl, credentials.project_api_key, scenario);
      // A 200 from capture means stored: listable at once, with no wait.
      await expectListedBack(managementUrl, credentials.personal_api_key, credentials.project_id, scenario);
      // And the project says it has ingested events, as PostHog's does (issue 29, defect 6).
      const project = await get(
        managementUrl,
        `/api/projects/${credentials.project_id}/`,
        credentials.personal_api_key,
      );
      expect(project.body.ingested_event).toBe(true);

      // A 200 from capture means stored: the person is in Postgres as soon as the SDK has flushed.
      // The embedded Postgres is served on an owner-only Unix socket, found through the lock file.
      const { Client } = await import('pg');
      const postgres = new Client({ connectionString: await findRunningEmbeddedPostgres(dataDir) });
      await postgres.connect();
      try {
        const persons = await postgres.query<{ properties: Record<string, unknown>; distinct_ids: string[] }>(
          `SELECT p.properties, array_agg(d.distinct_id ORDER BY d.distinct_id) AS distinct_ids
             FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
            WHERE p.id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id = $1)
            GROUP BY p.id`,
          [scenario.user],
        );
        expect(persons.rows).toEqual([
          {
            properties: expect.objectContaining({ email: `${scenario.user}@example.com` }),
            distinct_ids: [scenario.alias, scenario.user],
          },
        ]);
      } finally {
        await postgres.end();
      }
      expect(await standalone.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await standalone.kill();
    }
  });
});
