import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { freePort, REPO_ROOT, runProcess, splitModeEnv } from '@hogbase/test-support';
import { AppSlot } from './harness/deployment';
import { APP_ROLE } from './harness/postgres-server';
import { faultSuite, report, timeUntil, underLoad } from './harness/scenario';

/** How long every connection of the app role stays held. */
const HOLD_MS = 20_000;
/** The connections held: the role's whole allowance while the fault lasts. */
const HELD_CONNECTIONS = 20;
/** Management requests sent at once, again and again, during the fault (the experiment). */
const CONCURRENT_REQUESTS = 30;
const HOLDER = 'faults-holder';

interface ManagementAnswer {
  status: number;
  retryAfter: string | null;
  body: string;
}

/**
 * PostgreSQL out of connections (issue 28, defects 5 and 6): others hold every connection the app
 * role may have, and the apps' own are ended, so that none can get one back. Meanwhile management
 * answers every request 503 with Retry-After (never 500) and reports not ready; capture keeps
 * acknowledging the events of the project it knows; a capture started during the fault (a new pod
 * of a rolling deploy) knows no token and reports not ready throughout. Once the connections are
 * free, every service is ready again by itself and every acknowledged event is listed once.
 */
describe('PostgreSQL out of connections under load', () => {
  const suite = faultSuite();
  let dataDir: string | undefined;
  let management: AppSlot<'management'> | undefined;
  let lateCapture: AppSlot<'capture'> | undefined;
  let managementProject: { id: number; personalApiKey: string };

  beforeAll(async () => {
    const { postgres, kafka } = suite.deployment;
    // Management and the late capture get a data folder of their own: chDB under the deployment's
    // belongs to ingestion (management opens it only for the event listing, which is not asked).
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-faults-exhaustion-'));
    const env: NodeJS.ProcessEnv = {
      ...splitModeEnv({
        databaseUrl: postgres.appUrl,
        brokers: [kafka.brokers],
        consumerGroup: `faults-unused-${randomBytes(4).toString('hex')}`,
        dataDir,
      }),
      ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
    };
    const bootstrap = await runProcess(
      'npm',
      ['run', '--silent', 'admin', '--', 'bootstrap', '--email', 'admin-exhaustion@faults.test'],
      { cwd: REPO_ROOT, env, timeoutMs: 120_000 },
    );
    if (bootstrap.code !== 0)
      throw new Error(`admin bootstrap failed:\n${bootstrap.stdout}${bootstrap.stderr}`);
    const credentials = JSON.parse(bootstrap.stdout) as { project_id: number; personal_api_key: string };
    managementProject = { id: credentials.project_id, personalApiKey: credentials.personal_api_key };

    const [managementPort, capturePort] = [await freePort(), await freePort()];
    management = new AppSlot(
      'management',
      `http://127.0.0.1:${managementPort}`,
      { ...env, MANAGEMENT_PORT: String(managementPort) },
      'listening',
    );
    lateCapture = new AppSlot(
      'capture',
      `http://127.0.0.1:${capturePort}`,
      { ...env, CAPTURE_PORT: String(capturePort) },
      'listening',
    );
    await management.start();
    await management.waitReady();
  });

  afterAll(async () => {
    await management?.destroy();
    await lateCapture?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /**
   * Takes every connection the app role may have: HELD_CONNECTIONS sessions of its own, a limit of
   * as many, and the apps' sessions ended. A new connection of the role is then refused (53300).
   */
  async function exhaustConnections(): Promise<Client[]> {
    const holders: Client[] = [];
    for (let index = 0; index < HELD_CONNECTIONS; index++) {
      const holder = new Client({
        connectionString: suite.deployment.postgres.appUrl,
        application_name: HOLDER,
      });
      holder.on('error', () => undefined);
      await holder.connect();
      holders.push(holder);
    }
    await suite.deployment.postgres.superuser(`ALTER ROLE ${APP_ROLE} CONNECTION LIMIT ${HELD_CONNECTIONS}`);
    await suite.deployment.postgres.superuser(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND application_name <> $2`,
      [APP_ROLE, HOLDER],
    );
    return holders;
  }

  async function releaseConnections(holders: Client[]): Promise<void> {
    await suite.deployment.postgres.superuser(`ALTER ROLE ${APP_ROLE} CONNECTION LIMIT -1`);
    await Promise.all(holders.map((holder) => holder.end().catch(() => undefined)));
  }

  /** CONCURRENT_REQUESTS requests at once (reads, and writes unless `writes` is false), as a script sends them. */
  async function managementRequests(writes = true): Promise<ManagementAnswer[]> {
    if (!management) throw new Error('management did not start');
    const base = `${management.url}/api/projects/${managementProject.id}`;
    const headers = {
      authorization: `Bearer ${managementProject.personalApiKey}`,
      'content-type': 'application/json',
    };
    const requests: [string, RequestInit][] = [
      [`${base}/`, { headers }],
      [`${base}/feature_flags/`, { headers }],
      [
        `${base}/feature_flags/`,
        { method: 'POST', headers, body: JSON.stringify({ key: `held-${randomBytes(4).toString('hex')}` }) },
      ],
    ];
    return Promise.all(
      Array.from({ length: CONCURRENT_REQUESTS }, async (_, index) => {
        const [url, init] = requests[index % (writes ? 3 : 2)];
        const response = await fetch(url, init);
        return {
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: await response.text(),
        };
      }),
    );
  }

  it(`every connection of the app role held for ${HOLD_MS / 1000} s, then released`, async () => {
    if (!management || !lateCapture) throw new Error('management did not start');
    const [managementApp, newCapture] = [management, lateCapture];
    const during: ManagementAnswer[] = [];
    const readiness = { management: [] as number[], capture: [] as number[], newCapture: [] as number[] };
    const recovery: Record<string, number> = {};

    const result = await underLoad(suite.deployment, 'connection-exhaustion', async () => {
      const holders = await exhaustConnections();
      const heldAt = Date.now();
      try {
        // A capture started now, as a rolling deploy starts a new pod; sampled once it answers.
        let started: boolean | undefined;
        const starting = newCapture.start().then(
          () => (started = true),
          (error: unknown) => {
            started = false;
            throw error;
          },
        );
        starting.catch(() => undefined);
        // At least HOLD_MS, and until the new capture answered a few times (its start may be slow).
        while (started !== false && (Date.now() - heldAt < HOLD_MS || readiness.newCapture.length < 3)) {
          during.push(...(await managementRequests()));
          readiness.management.push(await managementApp.readiness());
          readiness.capture.push(await suite.deployment.capture.readiness());
          if (started) {
            // 0: no answer within the probe's 5 s, which says more of a starved machine than of capture.
            const status = await newCapture.readiness();
            if (status !== 0) readiness.newCapture.push(status);
          }
          await sleep(250);
        }
        await starting;
      } finally {
        await releaseConnections(holders);
      }
      const releasedAt = Date.now();
      const timed = async (name: string, recovered: () => Promise<unknown>) => {
        await recovered();
        recovery[name] = Date.now() - releasedAt;
      };
      await Promise.all([
        timed('managementReady', () => managementApp.waitReady()),
        timed('managementAnswers200', () =>
          timeUntil('management to answer 200 again', async () =>
            (await managementRequests(false)).every((answer) => answer.status === 200),
          ),
        ),
        timed('ingestionReady', () => suite.deployment.ingestion.waitReady()),
        timed('newCaptureReady', () => newCapture.waitReady()),
      ]);
    });

    const statuses: Record<string, number> = {};
    for (const answer of during) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    report(`connection exhaustion: management answered ${JSON.stringify(statuses)} during the fault`);
    report(`connection exhaustion: ready again after release (ms) ${JSON.stringify(recovery)}`);
    report(
      `connection exhaustion: sent and acknowledged ${result.acknowledged} events (${result.failedAttempts} failed attempts, retried: ${JSON.stringify(result.failures)})`,
    );

    // Management: 503 with Retry-After and the API's body for every request, never a 500.
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((answer) => answer.status !== 503 || answer.retryAfter !== '5')).toEqual([]);
    expect(new Set(during.map((answer) => answer.body))).toEqual(
      new Set([
        JSON.stringify({
          type: 'server_error',
          code: 'service_unavailable',
          detail: 'Transient error, please retry.',
          attr: null,
        }),
      ]),
    );
    expect(readiness.management).toContain(503);
    expect(readiness.management).not.toContain(200);
    // Capture knew the project's token: it stayed ready and refused no request (a request that
    // timed out on a starved machine was sent again, as any other failed attempt).
    expect(readiness.capture).toContain(200);
    expect(readiness.capture).not.toContain(503);
    expect(Object.keys(result.failures).filter((failure) => failure.startsWith('HTTP '))).toEqual([]);
    // The new capture never reached Postgres: it knows no token, so it never said ready.
    expect(readiness.newCapture).toContain(503);
    expect(readiness.newCapture).not.toContain(200);

    await suite.verify(result);

    const warnings = managementApp.warnings();
    report(`management's warnings and errors: ${JSON.stringify(warnings)}`);
    report(`capture's: ${JSON.stringify(suite.deployment.capture.warnings())}`);
    report(`the new capture's: ${JSON.stringify(newCapture.warnings())}`);
    report(`ingestion's: ${JSON.stringify(suite.deployment.ingestion.warnings())}`);
    // Logged once when the outage began, not once per refused request.
    expect(warnings).toEqual({
      'Postgres unavailable: requests that need it are answered 503 until it answers again': 1,
    });
    expect(managementApp.unexpectedExits).toEqual([]);
    expect(newCapture.unexpectedExits).toEqual([]);
  });
});
